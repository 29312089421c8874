// Builds the console (README "Console") into dist/console: the page and its
// icon; its script and stylesheet bundled by esbuild with content-hashed names
// (`console-<HASH>.js`, which lib/worker/http/console.ts serves as immutable); and a
// gzipped copy of each (served to clients that accept it).
// Run by `npm run build` (and `prepare`, so `npm ci` builds it); esbuild is a
// dev dependency: production installs get the built files.

import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const source = fileURLToPath(new URL('.', import.meta.url));
const out = fileURLToPath(new URL('../dist/console/', import.meta.url));

mkdirSync(out, { recursive: true });
// The previous build's files (their names change with their content); not folders.
for (const entry of readdirSync(out, { withFileTypes: true })) if (entry.isFile()) rmSync(join(out, entry.name));

const result = await build({
  entryPoints: { console: join(source, 'src/main.ts'), style: join(source, 'console.css') },
  entryNames: '[name]-[hash]',
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome109', 'firefox115', 'safari16'],
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs);
const named = (entry) => basename(outputs.find(([, o]) => o.entryPoint?.endsWith(entry))[0]);
const page = readFileSync(join(source, 'index.html'), 'utf8')
  .replace('href="console.css"', `href="${named('console.css')}"`)
  .replace('src="console.js"', `src="${named('src/main.ts')}"`);
writeFileSync(join(out, 'index.html'), page);
copyFileSync(join(source, 'favicon.svg'), join(out, 'favicon.svg'));

for (const entry of readdirSync(out, { withFileTypes: true })) {
  if (!entry.isFile() || !/\.(html|js|css|svg)$/.test(entry.name)) continue;
  writeFileSync(join(out, `${entry.name}.gz`), gzipSync(readFileSync(join(out, entry.name)), { level: 9 }));
}
