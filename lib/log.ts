// pino loggers for the primary and the workers: JSON lines, or pretty output
// when stdout is a terminal (contract §7).

import { pino, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export function createLogger(level: LevelWithSilent, bindings: Record<string, unknown>): Logger {
  const options = { level, base: bindings };
  if (!process.stdout.isTTY) return pino(options);
  // A synchronous pretty stream in-process: a transport would start one more
  // thread in every worker just to format lines for a human.
  return pino(options, pretty({ sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
}
