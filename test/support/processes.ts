// Whether a process is still there, for tests and scripts that outlive or
// kill the processes they watch (a worker after its primary died, a test
// run killed before it cleaned up).

/** Whether process `pid` exists: signal 0 checks without sending anything; EPERM means it exists but is not ours. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
