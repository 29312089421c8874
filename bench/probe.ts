// How fast this machine's CPUs run at a given moment: the CPU time of a fixed
// piece of single-threaded arithmetic (~30-60 ms here). Read between a
// section's measurements, it tells a spell of a slower or faster machine
// (on the 2-core VM, the same work took 33 to 57 ms within one minute)
// from a change in what is measured.

const cells = new Float64Array(1 << 16);

/** CPU ms the fixed work took just now. */
export function cpuProbeMs(): number {
  const started = process.cpuUsage();
  for (let pass = 0; pass < 300; pass++) for (let i = 0; i < cells.length; i++) cells[i] = cells[i] * 1.0000001 + i;
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}
