// The handler host: rt's own wasi:http/types and the wasi:io, clocks and
// stdio interfaces that must come with it, for instances of components that
// export wasi:http/incoming-handler (issue 24).
//
// Use: build the import entries once per instance (`handlerImports`), merge
// them over the sandbox's (the rest — random, wall clock, filesystem — stays
// preview2-shim's), and for each request make a HandlerExchange: pass its
// `request` and `responseOut` to the export's `handle`, then call `settle`.
// The classes are module-level, so every exchange's objects pass the glue's
// instanceof checks whichever instance they are handed to.

import type { OutputCapture } from '../sandbox/output-capture.js';
import { monotonicClock } from './clocks.js';
import type { HandlerRequest, RequestBodySource, ResponseSink } from './exchange.js';
import { HandlerExchange, httpTypes } from './http-types.js';
import { Pollable, poll } from './poll.js';
import { stdioImports } from './stdio.js';
import { InputStream, IoError, OutputStream } from './streams.js';

export type { ErrorCode, HandleOutcome, HandlerRequest, RequestBodySource, ResponseHead, ResponseSink } from './exchange.js';
export type { FieldEntry } from './fields.js';
export { BODY_WINDOW_BYTES, BufferedBody, MainEnd, PortBodySource, PortResponseSink, threadCells, threadWaker, type RequestBodyFeeder, type ResponseListener, type Settled } from './channel.js';
export { usePollWaker, Waker } from './poll.js';
export { HandlerExchange } from './http-types.js';

/**
 * The interfaces the handler host replaces, keyed as jco's glue asks for
 * them (unversioned). They go together: the guest polls timers, bodies and
 * stdio in one list, and every pollable and stream must be this module's.
 */
export function handlerImports(output: OutputCapture): Record<string, object> {
  return {
    'wasi:http/types': httpTypes,
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
