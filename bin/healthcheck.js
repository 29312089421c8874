#!/usr/bin/env node
// The container's HEALTHCHECK (slim images have no curl): exits 0 when rt's
// GET /api/health answers 200 within 3 s, 1 otherwise. It reads the address
// from rt's own configuration (rt/config.toml, the user config, RT__*
// variables), so a changed RT__HTTP__PORT moves the check with it. Liveness,
// not readiness: /api/health answers while the components still compile.

const { loadConfig } = await import(new URL('../dist/lib/config/index.js', import.meta.url).href);

/** Where a local client reaches a server listening on `host` (a wildcard address means every local one). */
function localHost(host) {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

try {
  const { http } = loadConfig({ cwd: process.cwd(), env: process.env });
  const res = await fetch(`http://${localHost(http.host)}:${http.port}/api/health`, { signal: AbortSignal.timeout(3_000) });
  if (res.status !== 200) throw new Error(`/api/health answered ${res.status}`);
  process.exit(0);
} catch (e) {
  process.stderr.write(`rt healthcheck: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
