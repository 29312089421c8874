// An instance thread: hosts one component instance and runs its calls, one at
// a time, in the order they arrive. A service runs its instances on threads
// when it cannot run inline on the worker's main thread (see execution.ts):
// a runaway call then blocks only its thread, and the main thread cuts it off
// by terminating the thread. Modules here are not fuel-instrumented, so
// compute-heavy code runs at full speed.
//
// A streaming method's call holds the instance until its stream ends: the
// thread keeps the resource and calls `next` while the stream's ring
// (byte-ring.ts) has room, framing each item straight into it; the main
// thread writes what it finds there and frees the room as the client takes
// it, so a slow reader stops production instead of making anyone buffer
// (docs/api.md §5.1.1). No message passes per item. A stream<T> an async
// function returns (WASI 0.3) goes into the ring the same way, read as the
// guest writes it: the guest's writes wait while the ring is full.
//
// A call that answers later (an async function, a future<T> parameter or
// result: WASI 0.3, docs/api.md §5.9) is awaited: the glue suspends the
// guest through JSPI and hands back a promise (or the future). While it
// waits, the next calls that may share the instance (`sharing`: ones that
// answer later and stream nothing) start beside it, as many as the main
// thread sends (the service's max_concurrency); any other call waits until
// none is in flight, and so does the replacement of a trapped or recycled
// instance.
//
// An HTTP handler's thread serves each request on a fresh instance by
// default (its max_invocations is 1), made ahead while it waits for the next
// (componentize-js's fetch-event builds answer one request per instance:
// docs/design/http-handlers.md). Its guest
// blocks in `poll` (Atomics.wait on the thread's cells) while the main
// thread feeds the request body and drains the response.

import { parentPort, workerData } from 'node:worker_threads';
import type { FunctionCodec } from '../../wit/codec.js';
import { answersLater, bodyStreamItems, futureParams } from '../../wit/async-abi.js';
import { decodeJson, type DecodedJson } from '../../wit/decode-json.js';
import { captureAll, OutputCapture } from '../sandbox/output-capture.js';
import { WASI_0_2, WASI_0_3 } from '../../wasi-lines.js';
import { OutgoingChannel, p2, p3, PortBodySource, PortResponseSink, threadWaker, type Waker } from '../wasi-host/index.js';
import { ComponentInstance, type StartedTask, errorText, type CallOutcome } from './component-instance.js';
import { instanceSpec } from './instance-spec.js';
import { LinkCaller } from './link-calls.js';
import { respond } from './p3-exchange.js';
import { argumentsCodec } from './method.js';
import { NdjsonItems } from './ndjson-items.js';
import { HandleTable, type HandleCallResult } from './handle-table.js';
import { framer, type Framer } from './stream-framing.js';
import type { Framing } from './invocation.js';
import { byteNexts, readInPlace, streamItems, WrittenItems, type StreamItems } from './stream-items.js';
import { RingProducer } from '../../byte-ring.js';
import { BAD_ARGUMENTS, COMPONENT_ERROR, END, isWork, OK, STREAM_FAILED, TRAP, type CallAnswer, type CallRequest, type HandleWork, type HttpWork, type StreamAnswer, type CallCancel, type ThreadEvent, type ThreadSpec } from './thread-protocol.js';


const port = parentPort!;
const { descriptor, modules, memoryCapBytes, issuer, cells, outgoing: outgoingPort, links: linkPort } = workerData as ThreadSpec;
const output = new OutputCapture();
captureAll(output);
if (descriptor.http?.wasi === WASI_0_2) p2.usePollWaker(threadWaker(cells));
/** An HTTP handler's outgoing requests, sent by the main thread. */
const outgoing = outgoingPort && new OutgoingChannel(outgoingPort, cells);
/** Calls across the service's links, made by the main thread. */
const links = linkPort && new LinkCaller(linkPort, cells);

function post(message: CallAnswer | StreamAnswer | ThreadEvent): void {
  port.postMessage(message);
}

function flushOutput(): void {
  for (const { stream, text, dropped } of output.take()) post({ type: 'output', stream, text, dropped });
}

const spec = { ...instanceSpec(descriptor, modules, memoryCapBytes, { output, ...(outgoing ? { outgoing } : {}), ...(links ? { links } : {}) }), byteNexts: byteNexts(descriptor) };
const recycleAfter = descriptor.instances.recycleAfter;
const queue: CallRequest[] = [];
let instance: ComponentInstance | undefined;
/** The handles of `instance`: made with it, gone with it. */
let table = new HandleTable(issuer, descriptor.methods);
let callsOnInstance = 0;

/** A stream being produced: the call that opened it holds the instance until it ends. */
interface Stream {
  id: number;
  frame: Framer;
  ring: RingProducer;
  /** Where its items come from: a resource's `next`, one at a time, or what the guest writes to a stream<T> it returned, as it writes it. */
  source: { kind: 'next'; resource: unknown; items: StreamItems } | { kind: 'written'; items: WrittenItems; body?: NdjsonItems | undefined };
}
let stream: Stream | undefined;
let pumping = false;
/** How long `next` is called in one go before the thread looks at its messages (a cancel). */
const PUMP_SLICE_MS = 2;

/** A fresh instance after a trap or at the recycle count; calls wait in the queue meanwhile. */
function replaceInstance(): void {
  instance = undefined;
  ComponentInstance.create(spec).then(
    (fresh) => {
      instance = fresh;
      table = new HandleTable(issuer, descriptor.methods);
      callsOnInstance = 0;
      flushOutput();
      drain();
    },
    (e: unknown) => {
      flushOutput();
      post({ type: 'failed', error: errorText(e) });
    },
  );
}

function answer(id: number, outcome: CallOutcome, ranMs?: number): CallAnswer {
  switch (outcome.kind) {
    case 'ok':
      return [id, OK, outcome.value, ranMs];
    case 'component-error':
      return [id, COMPONENT_ERROR, outcome.payload, ranMs];
    case 'trap':
      return [id, TRAP, outcome.code, outcome.message, ranMs];
  }
}

/** Each method's arguments codec, made when a large JSON body first needs it. */
const codecs: (FunctionCodec | undefined)[] = [];

/** A call's arguments: as the main thread sent them, or decoded here from a large JSON body (arguments.ts). */
function argumentsOf(method: number, body: unknown[] | Uint8Array): DecodedJson {
  if (!(body instanceof Uint8Array)) return { kind: 'arguments', args: body };
  return decodeJson((codecs[method] ??= argumentsCodec(descriptor.methods[method].function)), body);
}

/** Handle work (handle-table.ts): a call, answered with what came of it, or a drop. */
function handleWork(id: number, work: HandleWork): boolean {
  const began = performance.now();
  if (work.kind === 'handle-drop') {
    const dropped = table.drop(instance!, work.id);
    flushOutput();
    if (dropped?.kind !== 'trap') {
      post([id, OK, null]);
      return false;
    }
    // A destructor that trapped ends the instance as any trap does: the main thread learns it (and ends its handles) from the answer.
    post([id, OK, { kind: 'called', outcome: dropped, issued: [], consumed: [] } satisfies HandleCallResult]);
    return afterCall(dropped);
  }
  const result = table.call(instance!, work.call);
  const ranMs = performance.now() - began;
  flushOutput();
  post([id, OK, result, ranMs]);
  return result.kind === 'called' && afterCall(result.outcome);
}

/** One request to the HTTP handler; its instance is replaced after it (max_invocations is 1 for a handler unless its sidecar says otherwise), or after one it did not answer whole. */
function httpWork(id: number, { request, port, ring }: HttpWork): boolean {
  const began = performance.now();
  const sink = new PortResponseSink(port, ring);
  const exchange = p2.handlerExchange(request, new PortBodySource(port), sink);
  const called = instance!.handle(exchange.request, exchange.responseOut);
  // What the guest left unfinished is finished or cut off here, before the main thread hears that handle returned.
  const outcome = exchange.settle();
  // What it left in flight is stopped: nothing of this request runs after handle returned.
  outgoing?.abandon();
  const ranMs = performance.now() - began;
  flushOutput();
  sink.settled(called.kind === 'trap' ? { outcome, trap: { code: called.code, message: called.message } } : { outcome });
  port.close();
  post([id, OK, null, ranMs]);
  // An instance that left its response unfinished is not trusted with another.
  if (outcome.kind === 'responded' && outcome.complete) return afterCall(called);
  replaceInstance();
  return true;
}

/**
 * One request to a WASI 0.3 handler: served beside the others in flight on
 * the instance (`sharing`), its response read from the guest as the client
 * takes it (wasi-host/p3/handler.ts). The call is answered once the response
 * is over; a trap replaces the instance once the requests beside it are done.
 */
async function http03Work(id: number, { request, port, ring }: HttpWork): Promise<void> {
  inFlight++;
  const began = performance.now();
  const current = instance!;
  const sink = new PortResponseSink(port, ring);
  const exchange = new p3.HandlerExchange(request, new PortBodySource(port), sink, (bodyWaker ??= threadWaker(cells)));
  const { outcome, trap } = await respond(current, exchange, await answerOf(id, current, () => current.handle(exchange.request)));
  inFlight--;
  flushOutput();
  sink.settled(trap ? { outcome, trap: { code: trap.code, message: trap.message } } : { outcome });
  port.close();
  post([id, OK, null, performance.now() - began]);
  if (!afterCall(trap ?? { kind: 'ok', value: undefined })) drain();
}

/** Per method: whether a call answers later (async-abi.ts), which of its arguments are futures, and which is the request body (a stream<T>) and how it comes. */
const later = descriptor.methods.map((m) => ({ answers: answersLater(m.function), futures: futureParams(m.function), body: bodyStreamItems(m.function) }));
/** What a request body's bytes wait on: the main thread moves it when it posts some (channel.ts). */
let bodyWaker: Waker | undefined;
/**
 * Calls awaiting their answers. Calls that may share the instance (sharing,
 * below) start while others wait; any other call waits until none is in
 * flight, as it would behind a running call.
 */
let inFlight = 0;
/** The instance is to be replaced (a trap, the recycle count) once the calls in flight on it have answered. */
let replacing = false;

/** Whether call `request` may run while others wait on the instance: it answers later and holds nothing but its task (no stream in or out, no handles), or it is a request to a 0.3 handler. The main thread sends such calls side by side, up to the service's max_concurrency. */
function sharing(request: CallRequest): boolean {
  const [, method, body, framing, , bodyPort] = request;
  if (isWork(body)) return body.kind === 'http-request' && descriptor.http?.wasi === WASI_0_3;
  return later[method].answers && framing === undefined && bodyPort === undefined;
}

/**
 * Calls method `method`, which answers later, and answers once its answer
 * is there; then the queue goes on. A stream<T> it answers with (a call
 * with `framing`) is produced into `ring` as the guest writes it.
 */
async function asyncCall(id: number, method: number, args: unknown[], framing: Framing | undefined, ring: SharedArrayBuffer | undefined, body: NdjsonItems | undefined): Promise<void> {
  inFlight++;
  const began = performance.now();
  // A future<T> parameter came as T: the function gets a future resolved with it.
  for (const i of later[method].futures) args[i] = Promise.resolve(args[i]);
  const current = instance!;
  const outcome = await answerOf(id, current, () => current.call(method, args));
  inFlight--;
  flushOutput();
  // A body line that did not fit is the answer, whatever the guest made of the stream cut short before it.
  const unfit = outcome.kind === 'trap' ? undefined : body?.failure;
  if (unfit) {
    if (outcome.kind === 'ok' && framing !== undefined) new WrittenItems(instance!, outcome.value, false).done();
    post([id, BAD_ARGUMENTS, unfit.kind, unfit.details]);
    if (!replaceWhenIdle()) drain();
    return;
  }
  if (outcome.kind === 'ok' && framing !== undefined) {
    const signature = descriptor.methods[method].stream!;
    const items = new WrittenItems(instance!, outcome.value, signature.encoding === 'bytes');
    return openStream(id, { kind: 'written', items, body }, framer(signature, framing), ring!);
  }
  post(answer(id, outcome, performance.now() - began));
  if (!afterCall(outcome)) drain();
}

/** The stream call `id` opened is produced into `ring` from now on; the main thread learns that it is open. */
function openStream(id: number, source: Stream['source'], frame: Framer, ring: SharedArrayBuffer): void {
  post([id, OK, null]);
  const opened: Stream = { id, source, frame, ring: new RingProducer(ring) };
  stream = opened;
  if (source.kind === 'next') pump();
  else void pumpWritten(opened, source.items, source.body);
}

function drain(): void {
  while (instance && !stream && !replacing && queue.length > 0 && (inFlight === 0 || sharing(queue[0]))) {
    const [id, method, body, framing, ring, bodyPort] = queue.shift()!;
    if (isWork(body)) {
      if (body.kind === 'http-request' && descriptor.http?.wasi === WASI_0_3) void http03Work(id, body);
      else if (body.kind === 'http-request' ? httpWork(id, body) : handleWork(id, body)) return;
      continue;
    }
    const decoded = argumentsOf(method, body);
    if (decoded.kind !== 'arguments') {
      post([id, BAD_ARGUMENTS, decoded.kind, decoded.details]);
      continue;
    }
    const streamed = later[method].body;
    // The stream parameter is the request body, read as it arrives (docs/api.md §5.9): a stream<u8>'s bytes, or NDJSON items.
    let lines: NdjsonItems | undefined;
    if (streamed && bodyPort) {
      const chunks = new PortBodySource(bodyPort).chunks((bodyWaker ??= threadWaker(cells)));
      if (streamed.kind === 'items') lines = new NdjsonItems(streamed.element, descriptor.methods[method].function.params[streamed.at].name);
      decoded.args.splice(streamed.at, 0, lines ? lines.items(chunks) : chunks);
    }
    if (later[method].answers) {
      void asyncCall(id, method, decoded.args, framing, ring, lines);
      continue;
    }
    const began = performance.now();
    const outcome = instance.call(method, decoded.args);
    const ranMs = performance.now() - began;
    flushOutput();
    if (outcome.kind === 'ok' && framing !== undefined) {
      // The resource stays here.
      const signature = descriptor.methods[method].stream!;
      const items = streamItems(instance, outcome.value, readInPlace(signature, framing) ? signature.nextExport : undefined);
      return openStream(id, { kind: 'next', resource: outcome.value, items }, framer(signature, framing), ring!);
    }
    post(answer(id, outcome, ranMs));
    if (afterCall(outcome)) return;
  }
}

/** Counts the call; replaces the instance after a trap or at the recycle count, once no call is in flight on it. Whether it will. */
function afterCall(outcome: CallOutcome): boolean {
  // An instance that holds handles is kept past its recycle count until they are dropped (docs/api.md §5.1.2).
  if (outcome.kind === 'trap' || (recycleAfter > 0 && ++callsOnInstance >= recycleAfter && table.size === 0)) replacing = true;
  return replaceWhenIdle();
}

/** Replaces the instance if that is due and nothing is in flight on it; whether it is due (calls wait meanwhile). */
function replaceWhenIdle(): boolean {
  if (!replacing) return false;
  if (inFlight === 0) {
    replacing = false;
    replaceInstance();
  }
  return true;
}

/** Calls `next` while the ring has room, for a slice of time, then yields so a cancel message gets in. */
function pump(): void {
  if (pumping) return;
  pumping = true;
  const sliceEnd = performance.now() + PUMP_SLICE_MS;
  while (stream) {
    const current = stream;
    const { ring, source } = current;
    if (source.kind !== 'next') break;
    // Cancelled (the main thread closed the ring): no more `next`; the cancel message ends the stream.
    if (ring.closed) break;
    if (!ring.flush() || ring.free === 0) {
      ring.publish();
      // Full: the main thread wakes the ring once the client has taken half of it.
      if (ring.stall()) {
        void ring.room().then(pump);
        break;
      }
      continue;
    }
    // An item read in place is a view of the guest's memory: the ring holds all of it (flushed above) before `next` runs again.
    const outcome = source.items.next();
    flushOutput();
    if (outcome.kind !== 'ok' || outcome.value === undefined || outcome.value === null) {
      ring.publish();
      post(outcome.kind === 'ok' ? [current.id, END] : [current.id, STREAM_FAILED, outcome]);
      endStream(outcome);
    } else {
      ring.put(current.frame(outcome.value));
      // Each item is visible as soon as it exists: the next `next` may take long (a tail waiting for a line), or never return.
      ring.publish();
    }
    if (performance.now() >= sliceEnd) {
      setImmediate(() => {
        pumping = false;
        pump();
      });
      return;
    }
  }
  pumping = false;
}

/**
 * Puts what the guest writes to its stream<T> into the ring as it comes,
 * while the ring has room: the guest's writes wait meanwhile (its own
 * backpressure). Ends with the stream, a failure, or a cancel.
 */
async function pumpWritten(current: Stream, written: WrittenItems, body: NdjsonItems | undefined): Promise<void> {
  const { ring } = current;
  let items: unknown[] = [];
  let taken = 0;
  while (stream === current && !ring.closed) {
    if (!ring.flush() || ring.free === 0) {
      ring.publish();
      if (ring.stall()) await ring.room();
      continue;
    }
    if (taken < items.length) {
      ring.put(current.frame(items[taken++]));
      if (taken === items.length) ring.publish();
      continue;
    }
    // What the guest has written already is taken at once (rt's own host), else awaited.
    const outcome = written.nextNow() ?? (await written.next());
    // Cancelled while the guest wrote: the cancel ended the stream.
    if (stream !== current) return;
    flushOutput();
    if (outcome.kind !== 'ok' || outcome.value === undefined) {
      // The guest's answer to a body that ended early at a line that did not fit is cut short, once it has ended it.
      const unfit = outcome.kind === 'ok' ? body?.failure : undefined;
      ring.publish();
      post(unfit ? [current.id, STREAM_FAILED, unfit] : outcome.kind === 'ok' ? [current.id, END] : [current.id, STREAM_FAILED, outcome]);
      return endStream(outcome);
    }
    items = outcome.value as unknown[];
    taken = 0;
  }
}

/** The stream is over (ended, failed or cancelled): its resource or its readable end is dropped, unless a trap took the instance with it. */
function endStream(outcome: CallOutcome): void {
  const ended = stream!;
  stream = undefined;
  let last = outcome;
  if (outcome.kind !== 'trap') {
    const { source } = ended;
    const dropped = source.kind === 'written' ? source.items.done() : (source.items.done() ?? instance!.drop(source.resource));
    flushOutput();
    if (dropped?.kind === 'trap') last = dropped;
  }
  if (!afterCall(last)) drain();
}

port.on('message', (message: CallRequest | CallCancel) => {
  if (!Array.isArray(message)) return cancel(message);
  queue.push(message);
  drain();
});

/** The task of each async call in flight, which the guest may be asked to cancel (ComponentInstance.started), by call id. */
const cancels = new Map<number, StartedTask>();

/** What call `id` of `current` (`start`: a call of an async export, or of the handler) answers, its task cancellable meanwhile by a `cancel` message. */
async function answerOf(id: number, current: ComponentInstance, start: () => CallOutcome): Promise<CallOutcome> {
  const [called, task] = current.started(start);
  if (called.kind !== 'ok') return called;
  if (task) cancels.set(id, task);
  const outcome = await current.settled(called.value, task);
  cancels.delete(id);
  return outcome;
}

/** The main thread gave up on call `id` (its client left, its deadline passed): its stream ends, or its task is asked to cancel. */
function cancel(message: CallCancel): void {
  if (stream?.id !== message.id) return cancels.get(message.id)?.cancel();
  // Acknowledged once the resource is dropped: the main thread holds the instance for the stream until then.
  const id = stream.id;
  endStream({ kind: 'ok', value: undefined });
  post([id, END]);
}

try {
  instance = await ComponentInstance.create(spec);
  flushOutput();
  post({ type: 'ready' });
  drain();
} catch (e) {
  flushOutput();
  post({ type: 'failed', error: errorText(e) });
}
