// The content hash rt keys its caches by (compiled components, downloaded
// repository files): sha256, as lowercase hex.

import { createHash } from 'node:crypto';

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
