// `npm run build:examples`: builds the bundled examples into examples/build/,
// where rt/config.toml points, and compiles them for rt meanwhile (`npm
// start` runs it first). Cached by content hash: a rebuild takes milliseconds.

import { join } from 'node:path';
import { buildExamples, EXAMPLES_DIR } from './index.js';

const out = join(EXAMPLES_DIR, 'build');
buildExamples(out, (m) => process.stderr.write(`${m}\n`), { compile: true }).then(
  () => process.stderr.write(`examples ready in ${out}\n`),
  (e: unknown) => {
    process.stderr.write(`building the examples failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
