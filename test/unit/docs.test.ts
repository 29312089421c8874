// The documentation against the code: docs/api.md's configuration table is
// the schema's (lib/config/reference.ts renders it; the other documents link
// to it rather than repeat it), docs/api.md's error codes are the catalogue's, every
// "docs/api.md §n" the sources and documents cite is a section of it, and
// none still cites the contract it replaced.

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

  it("docs/api.md's error codes are the catalogue's", () => {
    expect(generated(api, 'errors')).to.equal(errorTable());
  });

  it('has every section the code and the documents cite', () => {
    const headings = new Set([...api.matchAll(/^#+ (\d+(?:\.\d+)*)\.? /gm)].map((m) => m[1]));
    const cited = new Map<string, string>();
    for (const path of sources()) {
      for (const m of read(path).matchAll(/docs\/api\.md (?:§|§§)(\d+(?:\.\d+)*)/g)) cited.set(m[1], path);
    }
    expect(cited.size).to.be.above(10);
    const missing = [...cited].filter(([section]) => !headings.has(section)).map(([s, path]) => `§${s} (cited in ${path})`);
    expect(missing).to.deep.equal([]);
  });

  it('cites docs/api.md, not the contract it replaced', () => {
    // The word, then a section sign: in any case, across a comment's line break.
    const stale = sources().filter((path) => /\bcontract(?:\s|\/\/|#|\*)*§/i.test(read(path)));
    expect(stale).to.deep.equal([]);
  });
});

/** The files that may cite docs/api.md: sources, tests, examples and the documents, as tracked. */
function sources(): string[] {
  const found: string[] = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && path !== join('examples', 'build')) walk(path);
      } else if (/\.(ts|js|mjs|md|ya?ml|toml)$/.test(entry.name)) found.push(path);
    }
  };
  for (const dir of ['lib', 'bin', 'console', 'test', 'bench', 'examples', 'docs']) walk(dir);
  return found;
}
