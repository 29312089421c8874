// The floor under every Node HTTP server: node:http on the same number of
// cluster workers, doing the same job as the Koa baseline and rt's calculator
// (JSON body in, add, JSON out) with nothing in between.

import { createServer } from 'node:http';
import { clustered } from './baseline-cluster.js';

clustered((port) => {
  createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/add') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let answer: string;
      try {
        const { a, b } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { a: number; b: number };
        answer = JSON.stringify({ result: a + b });
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad JSON"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
    });
  }).listen(port, '127.0.0.1');
});
