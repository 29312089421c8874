// The conventions tests keep, and the checks that keep them: no test waits
// on a timer (eslint.config.js, TIMED_WAITS). A test waits for a state with
// eventually(), or lets time pass on purpose with letTimePass(ms, why)
// (test/support/eventually.ts). The rule is taken from the configuration as
// ESLint resolves it for a test file, and run on samples and on test/ itself.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RULE = 'no-restricted-syntax';

describe('test conventions', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: ROOT });
  const linter = new Linter();

  /** The rule's setting for `file` (relative to the repository), as the configuration resolves it. */
  async function ruleFor(file: string): Promise<Linter.RuleEntry | undefined> {
    const config = (await eslint.calculateConfigForFile(join(ROOT, file))) as Linter.Config | undefined;
    return config?.rules?.[RULE];
  }

  /** The lines of `code` the rule reports, as it is set for `file` (none where it is off). */
  async function reported(code: string, file = 'test/unit/any.test.ts'): Promise<number[]> {
    const rule = await ruleFor(file);
    if (rule === undefined) return [];
    const messages = linter.verify(code, [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: { [RULE]: rule } }], file);
    for (const m of messages) expect(m.ruleId, `${file}:${m.line}: ${m.message}`).to.equal(RULE);
    return messages.map((m) => m.line);
  }

  describe('no test waits on a timer', () => {
    it('reports each kind of timed wait', async () => {
      expect(await ruleFor('test/unit/any.test.ts'), `${RULE} for test files`).to.not.equal(undefined);
      const waits = [
        'await new Promise((r) => setTimeout(r, 100));',
        'await new Promise<void>((resolve) => {\n  setTimeout(resolve, 5);\n});',
        'for (;;) {\n  if (done()) break;\n  await new Promise((r) => setTimeout(r, 20));\n}',
        'function sleep(ms: number) {\n  return new Promise((r) => setTimeout(r, ms));\n}',
        'await new Promise((r) => globalThis.setTimeout(r, 10));',
        'const ticking = new Promise((r) => { const t = setInterval(() => done() && (clearInterval(t), r(1)), 10); });',
        "import { setTimeout as pause2 } from 'node:timers/promises';",
        "import { scheduler } from 'timers/promises';",
        "const { setTimeout: later } = await import('node:timers/promises');",
        'const nap = promisify(setTimeout);',
        'await sleep(100);',
        'await delay(50);',
        'await setTimeout(10);',
      ];
      for (const wait of waits) expect(await reported(wait), wait).to.have.length.above(0);
      // Where it is: the line of the wait, not of what surrounds it.
      expect(await reported('const a = 1;\nwhile (!done()) {\n  await new Promise((r) => setTimeout(r, 50));\n}')).to.deep.equal([3]);
    });

    it('lets a test wait for a state, let time pass on purpose, or act later', async () => {
      const fine = [
        "await eventually(() => done(), { what: 'the state' });",
        "await letTimePass(300, 'nothing happens meanwhile');",
        'setTimeout(() => release(), 1_000);',
        'await new Promise((r) => setImmediate(r));',
        "await once(server, 'request');",
        'await new Promise((resolve) => server.listen(0, resolve));',
      ];
      for (const code of fine) expect(await reported(code), code).to.deep.equal([]);
    });

    it('holds in every test file but test/support/eventually.ts, which makes the waits', async () => {
      expect(await ruleFor('test/support/eventually.ts'), 'the rule in eventually.ts').to.equal(undefined);
      const files = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join('test', f));
      expect(files.length).to.be.above(50);
      const offenders: string[] = [];
      for (const file of files) for (const line of await reported(readFileSync(join(ROOT, file), 'utf8'), file)) offenders.push(`${file}:${line}`);
      expect(offenders).to.deep.equal([]);
    });
  });
});
