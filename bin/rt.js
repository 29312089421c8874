#!/usr/bin/env node
// The `rt` command: a thin launcher for the compiled CLI (npm ci builds it via `prepare`).
// Plain JavaScript that any Node parses, so that an unsupported Node gets one line, not a stack.
import { existsSync, readFileSync } from 'node:fs';

// package.json's `engines.node` (">=MAJOR.MINOR") is the one place the floor is written.
const floor = /^>=(\d+)\.(\d+)/.exec(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node);
const [major, minor] = process.versions.node.split('.').map(Number);
if (floor && (major < Number(floor[1]) || (major === Number(floor[1]) && minor < Number(floor[2])))) {
  process.stderr.write(`rt: Node.js ${process.versions.node} is not supported: rt needs Node.js ${floor[1]}.${floor[2]} or later (22, 24 or 26 LTS)\n`);
  process.exit(2);
}

const cli = new URL('../dist/lib/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('rt: not built yet; run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
const { cli: run } = await import(cli.href);
run(process.argv);
