// A local HTTPS server with its own CA, serving https:// repositories in tests.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';

export interface Route {
  status?: number;
  body?: string | Buffer;
  etag?: string;
  headers?: Record<string, string>;
  /** Send the body in pieces, without a Content-Length. */
  chunked?: boolean;
  /** Never answer. */
  hang?: boolean;
  /** Answer the headers and part of the body, then nothing more. */
  stall?: boolean;
}

interface Seen {
  path: string;
  ifNoneMatch?: string;
}

export interface TestServer {
  url: string;
  routes: Map<string, Route>;
  requests: Seen[];
  /** TLS connections accepted so far. */
  connections: number;
  /** TLS connections open now. */
  open(): number;
  close(): Promise<void>;
}

export interface Pems {
  ca: string;
  key: string;
  cert: string;
}

/** A CA, and a certificate for 127.0.0.1 signed by it. */
export async function certificates(): Promise<Pems> {
  const ca = await generate([{ name: 'commonName', value: 'rt test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  return { ca: ca.cert, key: server.private, cert: server.cert };
}

export async function startServer(pems: Pems): Promise<TestServer> {
  const routes = new Map<string, Route>();
  const requests: Seen[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '';
    const ifNoneMatch = req.headers['if-none-match'];
    requests.push(ifNoneMatch === undefined ? { path } : { path, ifNoneMatch });
    const route = routes.get(path);
    if (!route) return void res.writeHead(404).end('not found');
    if (route.hang) return;
    if (route.etag !== undefined && ifNoneMatch === route.etag) return void res.writeHead(304, { etag: route.etag }).end();
    const headers = { ...route.headers, ...(route.etag === undefined ? {} : { etag: route.etag }) };
    res.writeHead(route.status ?? 200, headers);
    const body = Buffer.from(route.body ?? '');
    if (route.stall) return void res.write(body);
    if (!route.chunked) return void res.end(body);
    for (let i = 0; i < body.length; i += 1024) res.write(body.subarray(i, i + 1024));
    res.end();
  };
  const server: Server = createServer({ key: pems.key, cert: pems.cert }, handle);
  const open = new Set<TLSSocket>();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const test: TestServer = {
    url: `https://127.0.0.1:${port}`,
    routes,
    requests,
    connections: 0,
    open: () => open.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('secureConnection', (socket: TLSSocket) => {
    test.connections++;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return test;
}

