// The documentation against the code: docs/api.md's configuration table is
// the schema's (lib/config/reference.ts renders it; the other documents link
// to it rather than repeat it), its error codes are the catalogue's, every
// "docs/api.md §n" the sources and documents cite is a section of it, none
// still names the document it replaced, and every relative link in the
// documents leads to a file that exists.

import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
    // Anywhere: the word, then a section sign (in any case, across a comment's line break).
    const cited = sources().filter((path) => /\bcontract(?:\s|\/\/|#|\*)*§/i.test(read(path)));
    expect(cited).to.deep.equal([]);
    // In the documents and lib/'s sources: any mention of it at all.
    const named = [...documents(), ...libSources()].filter((path) => namesTheContract(read(path)));
    expect(named).to.deep.equal([]);
  });

  it('would find the contract named across a line break or a comment continuation (the check can fail)', () => {
    for (const text of ['as The Contract says', 'see the\n// contract', 'per the\n * contract', 'the\n# contract', 'the  contract', 'the\n/* contract']) {
      expect(namesTheContract(text), JSON.stringify(text)).to.equal(true);
    }
    for (const text of ['the contracts', 'docs/api.md §5', 'the contractor', 'other contract']) {
      expect(namesTheContract(text), JSON.stringify(text)).to.equal(false);
    }
  });

  it('links only to files that exist (relative links in README.md, CONTRIBUTING.md and docs/)', () => {
    const docs = documents();
    expect(docs).to.include.members(['README.md', 'CONTRIBUTING.md', join('docs', 'api.md')]);
    expect(docs.flatMap((path) => relativeLinks(read(path))).length, 'relative links found').to.be.above(20);
    const broken = docs.flatMap((path) => brokenLinks(path, read(path)));
    expect(broken).to.deep.equal([]);
  });

  it('would report a link to a missing file (the check can fail)', () => {
    const text = '[api](docs/api.md#6-wit--json), [gone](docs/nowhere.md), [web](https://example.com/x.md), [here](#set-up), [up](../README.md)';
    expect(relativeLinks(text)).to.deep.equal(['docs/api.md', 'docs/nowhere.md', '../README.md']);
    expect(brokenLinks('README.md', text)).to.deep.equal(['README.md → docs/nowhere.md', 'README.md → ../README.md']);
  });
});

/** Whether `text` names "the contract": in any case, across line breaks, spaces and comment markers (`//`, `/*`, `*`, `#`). */
function namesTheContract(text: string): boolean {
  return /\bthe[\s/*#]+contract\b/i.test(text);
}

/** The targets of a Markdown text's relative links (`](path)`), without their `#anchor`; web, mail and in-page links left out. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^(?:[a-z][a-z0-9+.-]*:|#)/i.test(target))
    .map((target) => target.replace(/#.*$/, ''));
}

/** The relative links of the document at `path` (relative to the repository) that lead to no file, as `path → target`. */
function brokenLinks(path: string, text: string): string[] {
  return relativeLinks(text)
    .filter((target) => !existsSync(join(ROOT, dirname(path), target)))
    .map((target) => `${path} → ${target}`);
}

/** The documents: README.md, CONTRIBUTING.md and docs/*.md. */
function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name));
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

/** lib/'s TypeScript sources. */
function libSources(): string[] {
  return sources().filter((path) => path.startsWith('lib/') && path.endsWith('.ts'));
}

/** The files that may cite docs/api.md: sources, tests, examples and the documents, as tracked. */
function sources(): string[] {
  const found: string[] = ['README.md', 'CONTRIBUTING.md'];
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
