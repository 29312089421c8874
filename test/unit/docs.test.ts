// The documentation against the code: docs/api.md's and the README's
// configuration tables are the schema's (lib/config/reference.ts renders
// them), docs/api.md's error codes are the catalogue's, and every
// "docs/api.md §n" a comment cites is a section of it.

import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { referenceTable } from '../../lib/config/index.js';
import { ERRORS } from '../../lib/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function errorTable(): string {
  const rows = Object.entries(ERRORS).map(([code, { status, error }]) => `| \`${code}\` | ${status} | ${error} |`);
  return ['| Code | Status | `error` |', '|---|---|---|', ...rows, ''].join('\n');
}

/** The text between `<!-- generated: name -->` and `<!-- end generated -->`. */
function generated(text: string, name: string): string {
  const start = text.indexOf(`<!-- generated: ${name} -->\n`);
  expect(start, `docs/api.md has no generated ${name} table`).to.be.at.least(0);
  const from = text.indexOf('\n', start) + 1;
  return text.slice(from, text.indexOf('<!-- end generated -->', from));
}

describe('documentation', () => {
  const api = read('docs/api.md');

  it("docs/api.md's configuration table is the schema's (paste the expected table when this fails)", () => {
    expect(generated(api, 'config')).to.equal(referenceTable());
  });

  it("the README's configuration table is the schema's", () => {
    expect(read('README.md')).to.include(referenceTable());
  });

  it("docs/api.md's error codes are the catalogue's", () => {
    expect(generated(api, 'errors')).to.equal(errorTable());
  });

  it('has every section the code cites', () => {
    const headings = new Set([...api.matchAll(/^#+ (\d+(?:\.\d+)*)\.? /gm)].map((m) => m[1]));
    const cited = new Map<string, string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.(ts|js|mjs)$/.test(entry.name)) {
          for (const m of read(path).matchAll(/docs\/api\.md (?:§|§§)(\d+(?:\.\d+)*)/g)) cited.set(m[1], path);
        }
      }
    };
    for (const dir of ['lib', 'bin', 'console/src', 'test']) walk(dir);
    expect(cited.size).to.be.above(10);
    const missing = [...cited].filter(([section]) => !headings.has(section)).map(([s, path]) => `§${s} (cited in ${path})`);
    expect(missing).to.deep.equal([]);
  });
});
