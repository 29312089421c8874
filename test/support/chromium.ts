// Debian's Chromium, driven by playwright-core, for the tests that need a real
// browser (the console, what component pages may do).

import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { tempDir } from './rt-process.js';

const CHROMIUM = '/usr/bin/chromium';

/** A headless Chromium with a home of its own (its profile and caches), which the run removes. */
export async function launchChromium(): Promise<Browser> {
  // CI installs it (.ci/run); a missing browser must fail, not skip.
  if (!existsSync(CHROMIUM)) throw new Error(`these tests need Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  const home = await tempDir('rt-chromium-');
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_CACHE_HOME: `${home}/.cache` } as Record<string, string>;
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env });
}
