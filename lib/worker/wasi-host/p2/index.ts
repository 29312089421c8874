// The handler host of WASI 0.2: rt's own wasi:http/types and the wasi:io,
// clocks and stdio interfaces that must come with it, for instances of
// components that export wasi:http/incoming-handler@0.2 (docs/api.md §5.8).
//
// Use: build the import entries once per instance (`handlerImports`), give
// them to the sandbox's hostImports over its own (the rest — random, wall
// clock, filesystem — stays preview2-shim's), make the thread's `poll` sleep
// on its waker (`usePollWaker`), and for each request make a HandlerExchange:
// pass its `request` and `responseOut` to the export's `handle`, then call
// `settle` (and the OutgoingChannel's `abandon`, when the instance has one).
// The classes are module-level, so every exchange's objects pass the glue's
// instanceof checks whichever instance they are handed to.

import { onWasi02, type InterfaceTable } from '../../sandbox/wasi-imports.js';
import type { OutputCapture } from '../../sandbox/output-capture.js';
import type { HandlerRequest, RequestBodySource, ResponseSink } from '../core/handler-io.js';
import type { OutgoingTransport } from '../core/outgoing-transport.js';
import { monotonicClock } from './clocks.js';
import { Fields } from '../core/fields.js';
import { FutureTrailers, HandlerExchange, httpErrorCode, IncomingBody, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam } from './http-types.js';
import { FutureIncomingResponse, IncomingResponse, noOutgoingHandler, OutgoingRequest, outgoingHandler, RequestOptions } from './outgoing.js';
import { Pollable, poll } from './poll.js';
import { stdioImports } from './stdio.js';
import { InputStream, IoError, OutputStream } from './streams.js';

export { usePollWaker } from './poll.js';
export type { HandlerExchange } from './http-types.js';

/** wasi:http/types: one set of classes for every instance (the glue checks instanceof against these). */
const httpTypes = {
  Fields,
  IncomingRequest,
  IncomingBody,
  FutureTrailers,
  OutgoingResponse,
  OutgoingBody,
  ResponseOutparam,
  OutgoingRequest,
  RequestOptions,
  IncomingResponse,
  FutureIncomingResponse,
  httpErrorCode,
};

/**
 * The interfaces the handler host replaces, keyed by interface and version
 * line. They go together: the guest polls timers, bodies, outgoing responses
 * and stdio in one list, and every pollable and stream must be this module's.
 * Without `outgoing` (the thread's OutgoingChannel), outgoing-handler's
 * `handle` traps, saying so.
 */
export function handlerImports(output: OutputCapture, outgoing?: OutgoingTransport): InterfaceTable {
  return onWasi02({
    'wasi:http/types': httpTypes,
    'wasi:http/outgoing-handler': outgoing ? outgoingHandler(outgoing) : noOutgoingHandler,
    'wasi:io/poll': { Pollable, poll },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:io/error': { Error: IoError },
    'wasi:clocks/monotonic-clock': monotonicClock,
    ...stdioImports(output),
  });
}

/** One request: the objects `handle` takes, and `settle()` for what it left behind. */
export function handlerExchange(request: HandlerRequest, body: RequestBodySource, sink: ResponseSink): HandlerExchange {
  return new HandlerExchange(request, body, sink);
}
