// A body written on credit (lib/worker/http/credited-writes.ts) as a real
// node:http server sends it, read as raw bytes off the wire: every byte
// written before the end goes out before the final chunk, and nothing after
// it, whether the end comes in the turn of the writes or a later one; a cut
// body sends what was written and its last record, then closes without the
// final chunk. Node 22 and 24 sent the final chunk ahead of the bytes of the
// turn (the client saw an empty body, and the bytes after the response), and
// Node 26 lost a record written just before a cut.

import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { CreditedWrites } from '../../lib/worker/http/credited-writes.js';
import { eventually } from '../support/eventually.js';

/** What a test does with the response, and the credit granted back meanwhile. */
type Scenario = (writes: CreditedWrites, res: ServerResponse) => void | Promise<void>;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Views of shared memory, as the ring delivers them. */
function views(...texts: string[]): Uint8Array[] {
  const shared = new SharedArrayBuffer(1024);
  let at = 0;
  return texts.map((text) => {
    const bytes = Buffer.from(text);
    const view = new Uint8Array(shared, at, bytes.length);
    view.set(bytes);
    at += bytes.length;
    return view;
  });
}

/** A chunked body decoded strictly: its bytes, whether its final chunk came, and what came after that. */
function dechunk(raw: Buffer): { body: string; complete: boolean; after: string } {
  let at = 0;
  const parts: Buffer[] = [];
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol === -1) return { body: Buffer.concat(parts).toString(), complete: false, after: raw.subarray(at).toString() };
    const size = parseInt(raw.subarray(at, eol).toString(), 16);
    expect(Number.isNaN(size), `a chunk size line at ${at}: ${JSON.stringify(raw.subarray(at, eol).toString())}`).to.equal(false);
    if (size === 0) {
      expect(raw.subarray(eol, eol + 4).toString()).to.equal('\r\n\r\n');
      return { body: Buffer.concat(parts).toString(), complete: true, after: raw.subarray(eol + 4).toString() };
    }
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    expect(raw.subarray(eol + 2 + size, eol + 4 + size).toString(), 'the CRLF after a chunk').to.equal('\r\n');
    at = eol + 4 + size;
  }
}

describe('credited writes', () => {
  let server: Server;
  let port: number;
  let scenario: Scenario;
  let granted = 0;

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/plain');
      res.flushHeaders();
      void scenario(new CreditedWrites(res, (bytes) => (granted += bytes)), res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });

  after(() => server.close());

  beforeEach(() => {
    granted = 0;
  });

  /** Answers one request with `run`, as the wire carried it (the server closes the connection: `Connection: close`). */
  async function answer(run: Scenario): Promise<{ head: string; body: string; complete: boolean; after: string }> {
    scenario = run;
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: rt\r\nConnection: close\r\n\r\n');
    const received: Buffer[] = [];
    socket.on('data', (bytes: Buffer) => received.push(bytes));
    await once(socket, 'close');
    const raw = Buffer.concat(received);
    const split = raw.indexOf('\r\n\r\n');
    const head = raw.subarray(0, split).toString();
    expect(head).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    expect(head.toLowerCase()).to.include('transfer-encoding: chunked');
    return { head, ...dechunk(raw.subarray(split + 4)) };
  }

  it('ends a body after every byte written in the turn of the end, and sends nothing after the final chunk', async () => {
    const got = await answer((writes) => {
      for (const view of views('one\n', 'two\n', 'three\n')) writes.write(view);
      writes.end();
    });
    expect(got).to.deep.include({ body: 'one\ntwo\nthree\n', complete: true, after: '' });
    await turn();
    expect(granted, 'every byte granted back').to.equal(14);
  });

  it('ends a body after the bytes of earlier turns and of its own', async () => {
    const got = await answer(async (writes) => {
      const [first, second, third] = views('first\n', 'second\n', 'third\n');
      writes.write(first);
      await turn();
      writes.write(second);
      await turn();
      writes.write(third);
      writes.end();
    });
    expect(got).to.deep.include({ body: 'first\nsecond\nthird\n', complete: true, after: '' });
  });

  it('ends a body whose last bytes came in an earlier turn', async () => {
    const got = await answer(async (writes) => {
      writes.write(views('all of it\n')[0]);
      await turn();
      await turn();
      writes.end();
    });
    expect(got).to.deep.include({ body: 'all of it\n', complete: true, after: '' });
  });

  it('sends each turn’s bytes without waiting for the end: their credit comes back while the body goes on', async () => {
    const got = await answer(async (writes) => {
      for (let i = 0; i < 5; i++) {
        writes.write(views(`${i}\n`)[0]);
        await eventually(() => granted === 2 * (i + 1), { what: `the credit for item ${i}`, timeoutMs: 2_000, intervalMs: 1 });
      }
      writes.end();
    });
    expect(got).to.deep.include({ body: '0\n1\n2\n3\n4\n', complete: true, after: '' });
  });

  it('cuts a body short after the bytes written and its last record, in the turn of the writes or a later one', async () => {
    const record = 'event: error\ndata: {"code":"RT_ERR_X"}\n\n';
    const same = await answer((writes) => {
      writes.write(views('data: 0\n\n')[0]);
      writes.cut(Buffer.from(record));
    });
    expect(same).to.deep.include({ body: `data: 0\n\n${record}`, complete: false, after: '' });

    const later = await answer(async (writes) => {
      writes.write(views('data: 0\n\n')[0]);
      await turn();
      await turn();
      writes.cut(Buffer.from(record));
    });
    expect(later).to.deep.include({ body: `data: 0\n\n${record}`, complete: false, after: '' });

    const bare = await answer((writes) => {
      writes.write(views('partial')[0]);
      writes.cut();
    });
    expect(bare).to.deep.include({ body: 'partial', complete: false, after: '' });
  });
});
