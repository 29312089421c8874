// A producer thread for the byte ring's test (test/unit/byte-ring.test.ts):
// `total` bytes, byte j being 32 + j % 89 (printable, so an item can go in as
// a string or as bytes alike), in items of 1 B to 100 KiB at every alignment,
// every third one a string; it stalls when the ring is full and goes on once woken, and says
// 'end' when all is published.

import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { RingProducer } from '../../lib/byte-ring.js';

export interface RingProducerData {
  ring: SharedArrayBuffer;
  total: number;
}

export const patternByte = (j: number): number => 32 + (j % 89);

// The test imports the pattern; the thread runs the rest.
if (!isMainThread) produce(workerData as RingProducerData);

function produce({ ring: shared, total }: RingProducerData): void {
  const port = parentPort!;
  const ring = new RingProducer(shared);
  let made = 0;
  let size = 1;
  let count = 0;

  const item = (n: number): Uint8Array | string => {
    // At every alignment, as items read in place from a guest's memory lie: large ones go in after holes.
    const bytes = new Uint8Array(n + 8).subarray(count % 8, (count % 8) + n);
    for (let i = 0; i < n; i++) bytes[i] = patternByte(made + i);
    return ++count % 3 === 0 ? Buffer.from(bytes).toString('latin1') : bytes;
  };

  const pump = (): void => {
    for (;;) {
      if (!ring.flush() || ring.free === 0) {
        ring.publish();
        if (ring.stall()) return void ring.room().then(pump);
        continue;
      }
      if (made >= total) {
        ring.publish();
        return port.postMessage('end');
      }
      const n = Math.min(size, total - made);
      size = ((size * 7 + 13) % 102_400) + 1;
      ring.put(item(n));
      made += n;
      ring.publish();
    }
  };

  // A thread waiting only in Atomics.waitAsync would exit: listening keeps it alive, as rt's instance threads are.
  port.on('message', () => {});
  pump();
}
