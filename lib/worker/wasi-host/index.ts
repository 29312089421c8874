// The handler host: rt's own wasi:http/types and the wasi:io, clocks and
// stdio interfaces that must come with it, for instances of components that
// export wasi:http/incoming-handler (docs/api.md §5.8).
//
// Use: build the import entries once per instance (`handlerImports`), merge
// them over the sandbox's (the rest — random, wall clock, filesystem — stays
// preview2-shim's), and for each request make a HandlerExchange: pass its
// `request` and `responseOut` to the export's `handle`, then call `settle`
// (and the OutgoingChannel's `abandon`, when the instance has one).
// The classes are module-level, so every exchange's objects pass the glue's
// instanceof checks whichever instance they are handed to.
//
// Outgoing HTTP: the worker's main thread makes a MessageChannel per instance
// thread, keeps one end in an OutgoingClient (with the service's
// allowed_outbound_hosts) and hands the other to the thread in its
// workerData, where an OutgoingChannel over it goes to handlerImports.

import type { OutputCapture } from '../sandbox/output-capture.js';
import { monotonicClock } from './clocks.js';
import type { HandlerRequest, RequestBodySource, ResponseSink } from './exchange.js';
import { Fields } from './fields.js';
import { FutureTrailers, HandlerExchange, httpErrorCode, IncomingBody, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam } from './http-types.js';
import { FutureIncomingResponse, IncomingResponse, noOutgoingHandler, OutgoingRequest, outgoingHandler, RequestOptions, type OutgoingTransport } from './outgoing.js';
import { Pollable, poll } from './poll.js';
import { stdioImports } from './stdio.js';
import { InputStream, IoError, OutputStream } from './streams.js';

export type { ErrorCode, HandleOutcome, HandlerRequest, RequestBodySource, ResponseHead, ResponseSink } from './exchange.js';
export type { FieldEntry } from './fields.js';
export { BODY_WINDOW_BYTES, BufferedBody, MainEnd, PortBodySource, PortResponseSink, threadCells, threadWaker, type RequestBodyFeeder, type ResponseListener, type Settled } from './channel.js';
export { usePollWaker, Waker } from './poll.js';
export { HandlerExchange } from './http-types.js';
export type { OutgoingTransport } from './outgoing.js';
export { OutgoingChannel, OutgoingClient, RESPONSE_WINDOW, type OutgoingClientOptions, type OutgoingStats } from './outgoing-channel.js';

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
 * The interfaces the handler host replaces, keyed as jco's glue asks for
 * them (unversioned). They go together: the guest polls timers, bodies,
 * outgoing responses and stdio in one list, and every pollable and stream
 * must be this module's. Without `outgoing` (the thread's OutgoingChannel),
 * outgoing-handler's `handle` traps, saying so.
 */
export function handlerImports(output: OutputCapture, outgoing?: OutgoingTransport): Record<string, object> {
  return {
    'wasi:http/types': httpTypes,
    'wasi:http/outgoing-handler': outgoing ? outgoingHandler(outgoing) : noOutgoingHandler,
    'wasi:io/poll': { Pollable, poll },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:io/error': { Error: IoError },
    'wasi:clocks/monotonic-clock': monotonicClock,
    ...stdioImports(output),
  };
}

/** One request: the objects `handle` takes, and `settle()` for what it left behind. */
export function handlerExchange(request: HandlerRequest, body: RequestBodySource, sink: ResponseSink): HandlerExchange {
  return new HandlerExchange(request, body, sink);
}

/** The keys handlerImports provides: a caller's import object must take these from here, not from the shim. */
export const HANDLER_INTERFACES: readonly string[] = [
  'wasi:http/types',
  'wasi:http/outgoing-handler',
  'wasi:io/poll',
  'wasi:io/streams',
  'wasi:io/error',
  'wasi:clocks/monotonic-clock',
  'wasi:cli/stdin',
  'wasi:cli/stdout',
  'wasi:cli/stderr',
  'wasi:cli/terminal-input',
  'wasi:cli/terminal-output',
  'wasi:cli/terminal-stdin',
  'wasi:cli/terminal-stdout',
  'wasi:cli/terminal-stderr',
];
