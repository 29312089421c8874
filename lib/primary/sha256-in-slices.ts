// sha256 of megabytes without holding up the primary's event loop: a slice
// at a time, the loop turning between slices. Hashed in one go, an 11 MB
// componentize-js component holds it ~25 ms, and a catalog being described
// hashes several components (and, to check its cache, their core modules)
// at once: measured at a cold start, the loop ran 114 ms at a stretch
// hashing four components that were read at the same moment.

import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';

/** ~2 ms of hashing here. */
const SLICE = 1 << 20;

/** As sha256() (lowercase hex), for bytes of any size. */
export async function sha256InSlices(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += SLICE) {
    if (at > 0) await setImmediate();
    hash.update(bytes.subarray(at, at + SLICE));
  }
  return hash.digest('hex');
}
