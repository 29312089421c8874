// The loggers (lib/log.ts): pino-pretty is loaded only for a terminal, so a
// worker writing JSON lines never pays for it.

import { execFileSync } from 'node:child_process';
import { expect } from 'chai';

const LOG_MODULE = new URL('../../lib/log.js', import.meta.url).href;

/** Whether pino-pretty is loaded in a fresh process (stdout a pipe) once it has made a logger, pretty or not. */
function prettyLoaded(pretty: boolean): boolean {
  const script = `
    const { createLogger } = await import(${JSON.stringify(LOG_MODULE)});
    createLogger('silent', {}, ${pretty});
    const { createRequire } = await import('node:module');
    const cache = createRequire(import.meta.url).cache;
    process.stdout.write(String(Object.keys(cache).some((path) => path.includes('pino-pretty'))));`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }) === 'true';
}

describe('loggers', () => {
  it('load pino-pretty for a terminal only', () => {
    expect(prettyLoaded(false)).to.equal(false);
    expect(prettyLoaded(true)).to.equal(true);
  });
});
