// Tools a few tests need that a developer's machine may lack: the C toolchain
// for wasm32-wasi and Chromium (.ci/run installs both). Without one, such a
// test says what it skips and why; under CI (CI=true) it fails instead, so
// that a CI machine missing a tool cannot pass by skipping.

import { existsSync } from 'node:fs';
import { C_TOOLCHAIN_PACKAGES, haveCToolchain } from '../../examples/builder.js';

export const CHROMIUM = '/usr/bin/chromium';

const TOOLS = {
  'C toolchain': { available: haveCToolchain, install: C_TOOLCHAIN_PACKAGES },
  Chromium: { available: async () => existsSync(CHROMIUM), install: 'chromium' },
} satisfies Record<string, { available: () => Promise<boolean>; install: string }>;

export type OptionalTool = keyof typeof TOOLS;

/** Skips `context`'s test or hook (and so its suite) when `tool` is missing, saying so; under CI, fails it. */
export async function needs(context: Mocha.Context, tool: OptionalTool): Promise<void> {
  const { available, install } = TOOLS[tool];
  if (await available()) return;
  const why = `needs the ${tool} (apt-get install -y ${install}; .ci/run installs it)`;
  if (process.env.CI === 'true') throw new Error(`${why}: under CI a test does not skip for a missing tool`);
  console.log(`      (skipped: ${why})`);
  context.skip();
}
