// Which traces are recorded (OTEL_TRACES_SAMPLER, settings.ts): decided once
// per trace in this process, at its first span (a request's, or an outgoing
// request's that has none); the spans under it follow that decision.

import type { SamplerSetting } from './settings.js';
import type { RemoteParent } from './trace-context.js';

/** 2^56: the ratio sampler compares the trace id's rightmost 56 bits, as W3C Trace Context level 2 makes them random. */
const RANDOM_RANGE = 2 ** 56;

export function sampled(setting: SamplerSetting, traceId: string, parent: RemoteParent | undefined): boolean {
  switch (setting.kind) {
    case 'always_on':
      return true;
    case 'always_off':
      return false;
    case 'traceidratio':
      // The same trace id gets the same answer in every process that samples at this ratio.
      return setting.ratio >= 1 || parseInt(traceId.slice(18), 16) < setting.ratio * RANDOM_RANGE;
    case 'parentbased':
      return parent === undefined ? sampled(setting.root, traceId, undefined) : parent.sampled;
  }
}
