// What an HTTP handler component is told of a request (docs/api.md §5.8),
// read from real requests on a loopback server.

import { expect } from 'chai';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handlerRequestHead, pathBelow } from '../../lib/worker/http/wasi-http-request.js';

/** The request a loopback server receives for `send`'s request. */
async function received(path: string, headers: Record<string, string | string[]>, method = 'GET'): Promise<IncomingMessage> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    return await new Promise<IncomingMessage>((resolve, reject) => {
      server.once('request', (req: IncomingMessage, res) => {
        resolve(req);
        res.end();
      });
      const client = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => res.resume());
      client.on('error', reject);
      client.end();
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe('a handler\'s request head', () => {
  it('has the method, the path given, the scheme, the authority, and the headers in order with their case folded', async () => {
    const req = await received('/api/services/acme/site/http/a/b?x=1&y=%20', { 'X-One': '1', Accept: 'text/html', 'x-many': ['a', 'b'] }, 'PATCH');
    const head = handlerRequestHead(req, pathBelow(req.url!, '/api/services/acme/site/http'));
    expect(head).to.deep.include({ method: 'PATCH', pathWithQuery: '/a/b?x=1&y=%20', scheme: 'http' });
    expect(head.authority).to.match(/^127\.0\.0\.1:\d+$/);
    // Node's client adds Host and, for a PATCH, Content-Length: 0.
    expect(head.headers.filter(([n]) => n !== 'host' && n !== 'content-length')).to.deep.equal([
      ['x-one', '1'],
      ['accept', 'text/html'],
      ['x-many', 'a'],
      ['x-many', 'b'],
    ]);
  });

  it('leaves out hop-by-hop headers, and those the Connection header names', async () => {
    const req = await received('/x', { Connection: 'keep-alive, X-Private', 'Keep-Alive': 'timeout=5', 'X-Private': 'secret', TE: 'trailers', 'X-Kept': 'yes' });
    const names = handlerRequestHead(req, '/x').headers.map(([n]) => n);
    expect(names).to.include('x-kept');
    for (const gone of ['connection', 'keep-alive', 'x-private', 'te']) expect(names).to.not.include(gone);
  });

  it('gives the path below the handler\'s prefix, `/` at least, keeping the query', () => {
    const prefix = '/api/services/acme/site/http';
    expect(pathBelow(`${prefix}`, prefix)).to.equal('/');
    expect(pathBelow(`${prefix}?q=1`, prefix)).to.equal('/?q=1');
    expect(pathBelow(`${prefix}/`, prefix)).to.equal('/');
    expect(pathBelow(`${prefix}/a/b?c`, prefix)).to.equal('/a/b?c');
  });
});
