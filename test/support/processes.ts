// Whether a process is still there, for tests and scripts that outlive or
// kill the processes they watch (a worker after its primary died, a test
// run killed before it cleaned up), and how much CPU they have used.

import { readFile } from 'node:fs/promises';

/** Whether process `pid` exists: signal 0 checks without sending anything; EPERM means it exists but is not ours. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** CPU seconds (user + system) the processes have used so far (Linux /proc/<pid>/stat, in clock ticks of 1/100 s). */
export async function cpuSeconds(...pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}
