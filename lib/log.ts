// pino loggers for the primary and the workers: JSON lines, or pretty output
// when stdout is a terminal (docs/api.md §7).

import { createRequire } from 'node:module';
import { pino, type Logger, type LevelWithSilent } from 'pino';
import type PinoPretty from 'pino-pretty';

export type { Logger };

/**
 * pino-pretty, loaded only for a terminal: every worker would otherwise load
 * it (~12 ms and ~1.4 MB of heap per process, measured here) to format no
 * line. It is CommonJS, so it loads synchronously and createLogger stays so.
 */
function loadPretty(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/** `pretty`: format lines for a human (the default when stdout is a terminal). */
export function createLogger(level: LevelWithSilent, bindings: Record<string, unknown>, pretty = process.stdout.isTTY === true): Logger {
  const options = { level, base: bindings };
  if (pretty) {
    // A synchronous pretty stream in-process: a transport would start one more
    // thread in every worker just to format lines for a human.
    return pino(options, loadPretty()({ sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
  }
  // One line per request (docs/api.md §7); one write(2) per line would cost a
  // quarter of the throughput (measured: 15k vs 20.5k req/s). Lines are
  // buffered up to 4 KiB and flushed at least every 100 ms and at exit.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), 100).unref();
  process.on('exit', () => destination.flushSync());
  return pino(options, destination);
}
