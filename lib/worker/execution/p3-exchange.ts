// What one request to a WASI 0.3 handler comes to once `handle` was called,
// wherever it runs (an instance thread: instance-thread.ts; the main thread:
// inline-handler-place.ts): the response it returned sent (its body as the
// client takes it, then its trailers), its error-code refused, or its trap.

import type { ErrorCode, HandleOutcome, p3 } from '../wasi-host/index.js';
import { errorText, type CallOutcome, type ComponentInstance } from './component-instance.js';

export type TrapOutcome = Extract<CallOutcome, { kind: 'trap' }>;

/** What `handle` on `instance` answered (settled: the response, its error-code or its trap) carried through `exchange` to its end: the outcome, and the trap if there was one. */
export async function respond(instance: ComponentInstance, exchange: p3.HandlerExchange, answered: CallOutcome): Promise<{ outcome: HandleOutcome; trap?: TrapOutcome }> {
  if (answered.kind === 'component-error') return { outcome: exchange.refused(answered.payload as ErrorCode) };
  if (answered.kind === 'trap') return { outcome: { kind: 'no-response' }, trap: answered };
  try {
    return { outcome: await exchange.send(answered.value, (promise) => instance.guard(promise)) };
  } catch (e) {
    const failed = instance.failure(e);
    const trap: TrapOutcome = failed.kind === 'trap' ? failed : { kind: 'trap', code: 'RT_ERR_COMPONENT_TRAPPED', message: errorText(e) };
    return { outcome: exchange.cut(`the handler trapped: ${trap.message}`), trap };
  }
}
