// rt's host for wasi:http handlers, by layer as in wasmtime's wasi-http: a
// version-free core (core/: a request's body and response between the main
// thread and the instance thread, outgoing requests on node:http behind the
// service's allow-list, header rules, error codes, the thread's waker), then
// one folder per WASI version line with the interfaces a guest of that line
// imports (p2/: WASI 0.2; p3/: WASI 0.3). A new version line is a new
// folder beside them, built on the same core, and its entry here.
//
// Outgoing HTTP: the worker's main thread makes a MessageChannel per instance
// thread, keeps one end in an OutgoingClient (with the service's
// allowed_outbound_hosts) and hands the other to the thread in its
// workerData, where an OutgoingChannel over it goes to the version's
// handlerImports. A WASI 0.3 middleware's downstream `wasi:http/handler`
// (a link, docs/api.md §5.9) goes the same way and is served on the main
// thread by the linked service instead of node:http (OutgoingHead.link).

export type { ErrorCode, HandleOutcome, HandlerRequest, RequestBodySource, ResponseHead, ResponseSink } from './core/handler-io.js';
export type { FieldEntry } from './core/field-rules.js';
export { BODY_WINDOW_BYTES, BodyChannel, BufferedBody, MainEnd, PortBodySource, PortResponseSink, threadCells, threadWaker, wakeThread, type RequestBodyFeeder, type ResponseListener, type Settled } from './core/channel.js';
export { Waker, type WakeSignal } from './core/waker.js';
export { LocalEnd } from './core/local-channel.js';
export type { OutgoingHead, OutgoingTransport } from './core/outgoing-transport.js';
export { OutgoingChannel } from './core/outgoing-channel.js';
export { OutgoingClient, RESPONSE_WINDOW, type LinkedRequests, type OutboundRequest, type OutboundSide, type OutgoingClientOptions, type OutgoingStats } from './core/outgoing-client.js';
export * as p2 from './p2/index.js';
export * as p3 from './p3/index.js';
