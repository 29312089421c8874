#!/usr/bin/env node
// The `rt` command: a thin launcher for the compiled CLI (npm ci builds it via `prepare`).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/lib/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('rt: not built yet; run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
const { cli: run } = await import(cli.href);
run(process.argv);
