// Debian's Chromium, driven by playwright-core, for the tests that need a real
// browser (the console, what component pages may do).

import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, needs } from './optional-tools.js';
import { tempDir } from './rt-process.js';

/** A headless Chromium with a home of its own (its profile and caches), which the run removes; `context` is skipped without one (optional-tools.ts). */
export async function launchChromium(context: Mocha.Context): Promise<Browser> {
  await needs(context, 'Chromium');
  const home = await tempDir('rt-chromium-');
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_CACHE_HOME: `${home}/.cache` } as Record<string, string>;
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], env });
}
