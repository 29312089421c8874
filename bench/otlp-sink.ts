// What the traces section's rt exports its spans to: an OTLP/HTTP endpoint
// that reads each export and answers 200, as a collector that keeps up does.
// It runs in a process of its own, so its work is not the load generator's.

import { createServer } from 'node:http';
import { clustered } from './baseline-cluster.js';

clustered((port) => {
  createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  }).listen(port, '127.0.0.1');
});
