// The order the targets run in, round by round. Rotating one order (round r
// starts at target r) changes who goes first but keeps every target's
// predecessor: the target listed after the fastest one would run right after
// it in every round, and whatever a run leaves behind (the load generator's
// garbage in this process after its busiest run, the previous server's
// closing work) would land on it every time. In four short runs on a busy
// machine the rt listed right after raw node:http was the slower of the two
// rt rows in 7 of 8 rounds, whichever of the two it was: not proof, but
// cheap to rule out. Rows of a Williams design (a balanced Latin square)
// still rotate who goes first, and over n rounds (2n for an odd n) each
// target runs right after each other target equally often; fewer rounds get
// as many different predecessors as there are rounds.

/** Round `round`'s order of `targets`. */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const n = targets.length;
  // 0, 1, n-1, 2, n-2, ...: the differences between neighbours are all different.
  const base = Array.from({ length: n }, (_, i) => (i % 2 ? (i + 1) / 2 : (n - i / 2) % n));
  const shift = round % n;
  const order = base.map((b) => targets[(b + shift) % n]);
  // For an odd n the rows alone leave each pair once one way round and never the other; their reverses complete it.
  return n % 2 && Math.floor(round / n) % 2 ? order.reverse() : order;
}
