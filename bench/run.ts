// `npm run bench`: measures rt side by side with its reference points in one
// run and prints ratios and targets. Not part of `npm test`: the numbers
// depend on the machine. BENCH_ONLY selects sections (comma-separated):
//
// calls    per call, in process: a wasm export directly, through jco's glue,
//          through rt's invoke path (per-call.ts)
// http     throughput after a soak (BENCH_SOAK_SECONDS of load on every
//          target), in interleaved rounds: a lean Koa route (the targets'
//          reference), Koa + koa-body, raw node:http, rt with log levels warn
//          and info, the componentize-js greeter (http.ts, soak.ts)
// compute  spin(1,000,000) in a WAT component, directly vs over HTTP (compute.ts)
// streams  streamed answers, rt (1 worker) vs bare node:http writing the same
//          items: raw-bytes MiB/s by chunk size, items/s for small items,
//          time to first byte vs a JSON invoke (streams.ts)
// startup  start-up with 1 and 100 components, and memory per worker (startup.ts)
// reload   memory over many reloads of a changed component (reload.ts)
// workers  req/s of one rt with 1 and 2 workers (a WAT and a componentize-js
//          call), and RSS per process after the load (workers.ts)
// handles  a call on a handle when the connection reached the worker that
//          holds it vs when that worker is the other one (forwarded over its
//          peer socket), 1 and 8 connections, a plain invoke beside (handles.ts)
// http-handlers  a wasi:http handler's req/s, rt vs `jco serve` vs a lean
//          Koa route; a 64 MiB streamed response's MiB/s vs bare node:http
//          (http-handlers.ts)
// https-client  rt's HTTPS client for https: repositories vs undici: 200
//          small files, 20 of 4 MiB, and a 304 revalidation of all of them,
//          over loopback HTTPS with the bench's own CA (https-client.ts)
// waiting  1,000 calls of a WASI 0.3 async function waiting 3 s at once in
//          one rt instance vs a Koa route awaiting a timer: worker RSS per
//          call, time until all answered (waiting.ts; needs JSPI)
// p3-handlers  a WASI 0.3 hello-world handler's req/s vs a lean Koa route,
//          and 1 MiB echoes vs bare node:http (p3-handlers.ts; needs JSPI)
// traces   rt with traces off vs exporting every request's spans over OTLP
//          to a sink on loopback: the WAT add's req/s (traces.ts)
// versions this checkout's rt beside another built checkout's (BENCH_OTHER):
//          the WAT add and the greeter in interleaved rounds, for a change's
//          before and after (versions.ts); only when BENCH_ONLY names it
// drift    one rt under continuous load for 10 minutes: throughput, worker
//          CPU per request and RSS per slice, and whether the calculator's
//          add stays inline (drift.ts); only when BENCH_ONLY names it
//
// Settings (BENCH_SECONDS, BENCH_ROUNDS, ...) are listed in settings.ts and
// printed in the header.

import { printHeader, selectedSections, type Section } from './settings.js';

const sections = selectedSections();
printHeader(sections);

// Imported when selected: a section that no longer links (per-call.ts drives
// internal worker classes) does not take the others down with it.
const run: Record<Section, () => Promise<void>> = {
  calls: async () => (await import('./per-call.js')).perCall(),
  http: async () => (await import('./http.js')).overHttp(),
  compute: async () => (await import('./compute.js')).compute(),
  streams: async () => (await import('./streams.js')).streams(),
  startup: async () => (await import('./startup.js')).startupAndMemory(),
  reload: async () => (await import('./reload.js')).reloadMemory(),
  workers: async () => (await import('./workers.js')).workersScaling(),
  handles: async () => (await import('./handles.js')).handles(),
  'http-handlers': async () => (await import('./http-handlers.js')).httpHandlers(),
  'https-client': async () => (await import('./https-client.js')).httpsClient(),
  waiting: async () => (await import('./waiting.js')).waiting(),
  'p3-handlers': async () => (await import('./p3-handlers.js')).p3Handlers(),
  traces: async () => (await import('./traces.js')).traces(),
  drift: async () => (await import('./drift.js')).drift(),
  versions: async () => (await import('./versions.js')).versions(),
};

const failed: Section[] = [];
for (const section of sections) {
  try {
    await run[section]();
  } catch (e) {
    failed.push(section);
    console.error(`\nsection ${section} failed:`, e);
  }
}
if (failed.length) {
  console.error(`\nfailed section(s): ${failed.join(', ')}`);
  process.exitCode = 1;
}
