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

/** Where this process's logger buffers its lines (none for pretty output, written as it comes). */
const destinations: ReturnType<typeof pino.destination>[] = [];

/**
 * Exits with `code` once what the logger holds is written out, without
 * blocking: once the lines are written, once their reader is found gone, or
 * after `timeoutMs`. Every exit rt plans goes through here, because pino
 * also writes the lines at exit, synchronously, and its sonic-boom (4.x)
 * retries a write that fails with anything but EAGAIN forever: a process
 * whose stdout reader had gone (a pipe's reader killed first, `rt start |
 * tee` under a process manager) then never exited, asleep between writes
 * failing with EPIPE, deaf to SIGTERM. A failure met here is met
 * asynchronously: pino's destination then drops its lines, and its flush at
 * exit does nothing.
 */
export async function exitAfterLogs(code: number, timeoutMs = 1000): Promise<never> {
  const flushed = destinations.map(
    (destination) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        destination.flush(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  );
  await Promise.all(flushed);
  process.exit(code);
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
  // buffered up to 4 KiB and flushed at least every 100 ms, before a planned
  // exit (exitAfterLogs) and at exit (by pino).
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), 100).unref();
  destinations.push(destination);
  return pino(options, destination);
}
