// Loaded into an rt process by tests that measure the primary's memory
// (NODE_OPTIONS=--import=<this file>): on SIGUSR2 the primary collects its
// garbage and prints what it still holds as one JSON line, keyed
// `heap_probe`. What survives a full collection is what the process
// retains; its RSS also counts heap V8 has not handed back yet, which drifts
// by megabytes either way. Workers inherit the option, and ignore it.

import cluster from 'node:cluster';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

if (cluster.isPrimary) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  process.on('SIGUSR2', () => {
    gc();
    gc();
    const { heapUsed, rss } = process.memoryUsage();
    process.stderr.write(`${JSON.stringify({ heap_probe: { heapUsed, rss } })}\n`);
  });
}
