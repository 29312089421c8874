// What Linux's /proc says about a process: its resident memory and the CPU
// time it has used, for sections that watch rt's workers from outside.

import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** Clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Resident memory (VmRSS) of `pid`, MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)![1]) / 1024;
}

/** CPU time `pid` has used, user and system, all its threads, seconds. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count the fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
