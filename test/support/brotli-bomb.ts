// A brotli bomb: spaces compressed at quality 5 with a 16 MiB
// window, a few hundred bytes per GiB, that take seconds of CPU to inflate.

import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createBrotliCompress } from 'node:zlib';

/** `bytes` spaces in brotli, compressed in slices so they never all exist at once. */
export async function brotliBomb(bytes: number): Promise<Buffer> {
  const spaces = Buffer.alloc(16 * 1024 * 1024, ' ');
  const parts: Buffer[] = [];
  await pipeline(
    Readable.from(
      (function* () {
        for (let n = 0; n < bytes; n += spaces.length) yield spaces;
      })(),
    ),
    createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: bytes } }),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        parts.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(parts);
}
