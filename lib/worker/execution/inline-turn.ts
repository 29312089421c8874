// When inline calls run: not as each request's body arrives, but together, at
// the check phase of the event-loop turn their requests arrived in.
//
// Under load a worker's turn reads many sockets. Run as each request came,
// every call is followed by its answer's write, and autocannon-like clients
// (and real ones, waiting on keep-alive connections) send their next request
// at once: the worker wakes for one request at a time, and runs a
// componentize-js guest (11 MB of engine code) between node's HTTP code each
// time, from cold caches. Deferred to the turn's check phase, the turn's calls
// run back to back, then their answers are written. Measured on this
// project's 2-core machines (2 workers, 50 connections, interleaved runs):
// worker CPU per request 141 → 98 µs for the componentize-js greeter, 60 → 51
// µs for a WAT add; an idle request waits one loop turn more (microseconds).

let turn: Promise<void> | undefined;

/** Resolves at the check phase of this event-loop turn, with every other inline call made in it, in the order they were made. */
export function inlineTurn(): Promise<void> {
  return (turn ??= new Promise((resolve) =>
    setImmediate(() => {
      turn = undefined;
      resolve();
    }),
  ));
}
