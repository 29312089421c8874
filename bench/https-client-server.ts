// The repository that bench/https-client.ts downloads from, in a process of its
// own so that the clients' CPU time is theirs alone: over loopback HTTPS with
// the certificate it is sent (signed by the bench's own CA), `small` files of
// `smallBytes` at /small/<i>.json and `big` files of `bigBytes` at
// /big/<i>.wasm, each with an ETag (`"small-<i>"`, `"big-<i>"`) and a 304 to
// an If-None-Match naming it. Keeps nothing on disk.

import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ServerSetup {
  key: string;
  cert: string;
  small: number;
  smallBytes: number;
  big: number;
  bigBytes: number;
}

const pattern = (size: number, seed: number) => Buffer.from(Array.from({ length: size }, (_, i) => 32 + ((i * 7 + seed) % 95)));

// Whatever happens to the bench, this process does not outlive it.
process.once('disconnect', () => process.exit(0));

process.once('message', (setup: ServerSetup) => {
  const small = Array.from({ length: setup.small }, (_, i) => pattern(setup.smallBytes, i));
  // One buffer for every big file: the bytes do not matter, only their number.
  const big = pattern(setup.bigBytes, 0);
  const files = new Map<string, { body: Buffer; etag: string }>();
  small.forEach((body, i) => files.set(`/small/${i}.json`, { body, etag: `"small-${i}"` }));
  for (let i = 0; i < setup.big; i++) files.set(`/big/${i}.wasm`, { body: big, etag: `"big-${i}"` });

  const server = createServer({ key: setup.key, cert: setup.cert }, (req, res) => {
    const file = files.get(req.url ?? '');
    if (!file) return void res.writeHead(404).end('not found');
    if (req.headers['if-none-match'] === file.etag) return void res.writeHead(304, { etag: file.etag }).end();
    res.writeHead(200, { etag: file.etag, 'content-length': file.body.length }).end(file.body);
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
});
