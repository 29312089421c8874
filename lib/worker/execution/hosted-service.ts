// One service as a worker hosts it: its method table (method.ts, a codec per
// method, built once) and where its calls run (execution.ts: inline, or on
// instance threads). An Invocation (invocation.ts) comes in; its arguments
// are checked and converted here (arguments.ts), before any instance sees
// them, so a bad request never costs a call; what comes out is the result's
// JSON value or bytes, or a Failure in the execution layer's own words (the
// HTTP layer gives it a status: http/failures.ts).

import type { Logger } from 'pino';
import { serviceName, type Placement, type ResourceDescriptor, type ServiceDescriptor } from '../../service.js';
import { WASI_0_3 } from '../../wasi-lines.js';
import { interfaceKey } from '../../wit/interface-key.js';
import { EndedHandles, HandleDirectory, type HandleChange } from './handle-directory.js';
import { HandleScopes } from './handle-scopes.js';
import type { HandleHomes } from './handle-homes.js';
import { handleKey, redactScope, type HandleIssuer, type WorkerIssuer } from './handle-ids.js';
import type { HandleCall } from './handle-table.js';
import { endedBecause, CallHandles, neverIssued } from './call-handles.js';
import type { FunctionCodec } from '../../wit/codec.js';
import { callArguments, type Arguments } from './arguments.js';
import { componentInstances, Execution, type InstanceLimits } from './execution.js';
import type { LinkedServices } from './link-target.js';
import type { CallResult, Failure, Invocation, InvokeResult, OtherWorker, StreamFailure, StreamOpening, StreamOptions } from './invocation.js';
import type { BodyChannel, HandlerRequest, MainEnd } from '../wasi-host/index.js';
import { methodList, methodTable, type Method } from './method.js';
import type { Move, PlacementSettings } from './placement.js';
import type { CallTrace, RequestTrace } from '../../tracing/traces.js';

/** What every hosted service gets from the worker's configuration. */
export interface HostingOptions extends InstanceLimits {
  log: Logger;
  /** Issues the handles of every service in the worker (the worker's id and the run's key); tests may leave it out. */
  issuer?: WorkerIssuer;
  /** Which worker each service's handles live in (handle-homes.ts); left out (tests), they live wherever they are made. */
  homes?: HandleHomes;
  /** Why handles ended, for the worker's services old and new: a restart's new service still answers 410 with the reason. */
  endedHandles?: EndedHandles;
  /** Handles made and ended, for the metric. */
  handlesChanged?: (service: HostedService, change: HandleChange, count: number) => void;
  /** A service moved between inline and threads (execution.ts): for the metric and the listing. */
  moved?: (service: HostedService, move: Move) => void;
  /** The placement policy's settings (tests shorten the probation). */
  placement?: PlacementSettings;
  /** The worker's services, for the links services import (docs/api.md §5.9): the registry gives them. */
  linked?: LinkedServices;
}

/** A call that involves handles, to be made in this worker (routeHandleCall): on what, with which handles, in which scope. */
export interface HandleCallRoute {
  kind: 'here';
  execution: Execution;
  codec: FunctionCodec;
  where: CallHandles;
  /** The call makes handles (its result holds some). */
  creates: boolean;
  /** It makes them from none it was passed: on its scope's maker instance. */
  fresh: boolean;
  scope: string;
}

export class HostedService {
  readonly name: string;
  readonly #methods: Map<string, Method>;
  readonly #all: Method[];
  /** Absent while quiesced: a quiesced service holds no instances. */
  #execution: Execution | undefined;
  #quiescing: Promise<void> | undefined;
  readonly #handles: HandleDirectory;
  readonly #resources: Map<string, ResourceDescriptor>;

  readonly #issuer: HandleIssuer;
  readonly #ended: EndedHandles;
  readonly #homes: HandleHomes | undefined;
  /** Which instance a call that makes handles from none runs on, by scope (handle-scopes.ts). */
  readonly #scopes: HandleScopes;

  private constructor(
    readonly descriptor: ServiceDescriptor,
    options: HostingOptions,
  ) {
    this.name = serviceName(descriptor.id);
    this.#issuer = { ...(options.issuer ?? { workerId: 0, key: handleKey() }), scope: this.name };
    this.#ended = options.endedHandles ?? new EndedHandles();
    this.#homes = options.homes;
    this.#all = methodList(descriptor.methods);
    this.#methods = methodTable(this.#all);
    this.#resources = new Map(descriptor.resources.flatMap((r) => r.aliases.map((alias) => [alias, r] as const)));
    const changed = options.handlesChanged;
    this.#handles = new HandleDirectory({
      issuer: this.#issuer,
      idleMs: descriptor.instances.handleIdleSeconds * 1000,
      max: descriptor.instances.maxHandles,
      maxScopes: descriptor.instances.maxScopes,
      ended: this.#ended,
      ...(changed ? { onChange: (change: HandleChange, count: number) => changed(this, change, count) } : {}),
      onScopeEmpty: (scope) => this.#scopes.emptied(scope),
    });
    this.#scopes = new HandleScopes(this.#handles, descriptor.instances.maxScopes);
  }

  /** Compiles the component and starts its instances: a component that cannot instantiate fails here, not on its first call. */
  static async start(descriptor: ServiceDescriptor, options: HostingOptions): Promise<HostedService> {
    const hosted = new HostedService(descriptor, options);
    if (!descriptor.quiesced) {
      const log = options.log.child({ service: hosted.name });
      const onMove = options.moved && ((move: Move) => options.moved!(hosted, move));
      hosted.#execution = await Execution.start(componentInstances(descriptor, options, hosted.#issuer, log, options.linked), {
        log,
        holdsHandles: () => hosted.#handles.size > 0,
        ...(options.placement ? { placement: options.placement } : {}),
        ...(onMove ? { onMove } : {}),
      });
    }
    return hosted;
  }

  method(name: string): Method | undefined {
    return this.#methods.get(name);
  }

  /** The exported resource `name` (docs/api.md §5.1.2). */
  resource(name: string): ResourceDescriptor | undefined {
    return this.#resources.get(name);
  }

  /** A method of resource `resource`, by its member name (`add`), reached through a handle; or its constructor. */
  resourceMethod(resource: ResourceDescriptor, name: string | null): Method | undefined {
    const index = name === null ? resource.constructorMethod : resource.methods.find((i) => this.descriptor.methods[i].name === name);
    return index === null || index === undefined ? undefined : this.#all[index];
  }

  /** The resource live handle `id` is a handle to; or why there is none here (another worker issued it: the request goes there). */
  handleResource(id: string): ResourceDescriptor | Failure | OtherWorker {
    const where = this.#handles.locate(id);
    switch (where.kind) {
      case 'unknown':
        return { kind: 'unknown-handle', details: neverIssued(id) };
      case 'ended':
        return { kind: 'handle-ended', details: endedBecause(where.why) };
      case 'other-worker':
        return { kind: 'other-worker', worker: where.worker, for: 'handles' };
      case 'live':
        // A restart's new service keeps no handles of the old one's, so a live handle's resource is this service's.
        return this.descriptor.resources.find((r) => r.key === where.handle.key)!;
    }
  }

  /** Live handles in this worker. */
  liveHandles(): number {
    return this.#handles.size;
  }

  /** Named handle scopes alive in this worker, each an instance of its own. */
  liveScopes(): number {
    return this.#scopes.live;
  }

  /** The live handles in this worker, as the listing shows them. */
  handles(): HandleView[] {
    const byKey = new Map(this.descriptor.resources.map((r) => [r.key, r.name]));
    return this.#handles.list().map((h) => ({ id: h.id, resource: byKey.get(h.key) ?? h.key, scope: redactScope(h.scope), created: h.created, lastUsed: h.lastUsed, expires: this.#handles.expires(h) }));
  }

  /** Drops handle `id` (its destructor runs): done, or why not. */
  async dropHandle(id: string): Promise<{ kind: 'dropped' } | Failure> {
    const where = this.#handles.locate(id);
    if (where.kind === 'live' && (await this.#handles.drop(id))) return { kind: 'dropped' };
    return { kind: 'handle-ended', details: endedBecause(where.kind === 'ended' ? where.why : this.#ended.why(id)) };
  }

  /**
   * What its open streams, or its requests whose bodies are arriving, hold
   * in this worker, and the most there are of it (the fair shares' whole:
   * http/fair-shares.ts): instance threads; for a WASI 0.3 handler's
   * requests, which share instances, places in them.
   */
  holdable(kind: 'streams' | 'request_bodies'): { whole: number; what: string } {
    const { maxInstances, maxConcurrency } = this.descriptor.instances;
    if (kind === 'request_bodies' && this.descriptor.http?.wasi === WASI_0_3) return { whole: maxInstances * maxConcurrency, what: 'places in its instances (max_instances × max_concurrency)' };
    return { whole: maxInstances, what: 'instance threads' };
  }

  liveInstances(): number {
    return this.#execution?.live ?? 0;
  }

  /** Calls waiting for an instance in this worker. */
  waitingCalls(): number {
    return this.#execution?.waiting ?? 0;
  }

  /** Where its calls run now; undefined while quiesced. */
  get placement(): Placement | undefined {
    return this.#execution?.placement;
  }

  get quiesced(): boolean {
    return this.#quiescing !== undefined || this.descriptor.quiesced;
  }

  /** Refuses new calls from now on; resolves once the running ones have finished and the instances are gone. */
  quiesce(): Promise<void> {
    this.#quiescing ??= (async () => {
      this.#handles.endAll('the service was quiesced');
      this.#scopes.close('the service was quiesced');
      await this.#execution?.drain();
      this.#execution = undefined;
    })();
    return this.#quiescing;
  }

  /** Ends the service's instances once the calls already made have finished (it was replaced or removed). */
  drain(): Promise<void> {
    this.#handles.endAll('the service was restarted or reloaded: its instances were replaced');
    this.#scopes.close('the service was restarted or reloaded');
    return this.#execution?.drain() ?? Promise.resolve();
  }

  /** Ends the instances at once (they never served: a restart that was called off). */
  close(): Promise<void> {
    this.#handles.endAll('the service was unloaded');
    this.#scopes.close('the service was unloaded');
    return this.#execution?.close() ?? Promise.resolve();
  }

  /**
   * Makes `invocation`: the result as JSON, or as raw bytes (a list<u8>
   * result whose bytes were asked for), or why there is none. A call that
   * involves handles is made as `route` (routeHandleCall) decided, just
   * before; one that involves none needs no route.
   */
  invoke(invocation: Invocation, route?: HandleCallRoute): Promise<InvokeResult> {
    const trace = invocation.trace?.call(this.name, invocation.method.descriptor.name);
    return trace ? this.#traced(trace, this.#invoke(invocation, route, trace)) : this.#invoke(invocation, route);
  }

  async #invoke(invocation: Invocation, route: HandleCallRoute | undefined, trace?: CallTrace): Promise<InvokeResult> {
    if (route) return this.#invokeRouted(invocation, route);
    // Its handles would go unresolved: rt's own mistake, never the client's.
    if (this.involvesHandles(invocation)) throw new Error(`${this.name}: ${invocation.method.descriptor.name} involves handles, and was not routed (routeHandleCall) first`);
    const { method, input, deadline, answer, signal, body } = invocation;
    const ready = this.#prepare(method, input);
    if (ready.kind !== 'prepared') return ready;
    const result = await ready.execution.run({ kind: 'call', method: method.index, args: ready.args, ...(body ? { body } : {}) }, deadline, signal, trace);
    if (result.kind !== 'ok') return encodedFailure(ready.codec, result);
    return returned(method, answer, result.value, ready.codec.encodeResult);
  }

  /**
   * Calls streaming method `invocation.method` (docs/api.md §5.1.1): `open`
   * once it has returned its resource, after which the items go to
   * `stream.sink`; or why it did not open.
   */
  async openStream({ method, input, deadline, signal, body, trace: request }: Invocation, stream: StreamOptions): Promise<StreamOpening> {
    const ready = this.#prepare(method, input);
    if (ready.kind !== 'prepared') return ready;
    // The call's span lasts as long as its stream: until its end, or until it is cancelled.
    const trace = request?.call(this.name, method.descriptor.name);
    const { sink } = stream;
    const encoded = {
      chunk: (bytes: Uint8Array, items: number) => sink.chunk(bytes, items),
      end: (failure?: StreamFailure) => {
        trace?.end(failure?.kind ?? 'ok', this.placement);
        sink.end(failure && encodedFailure(ready.codec, failure));
      },
    };
    const opening = await ready.execution.run({ kind: 'stream', method: method.index, args: ready.args, options: { ...stream, sink: encoded }, ...(body ? { body } : {}) }, deadline, signal, trace);
    if (opening.kind !== 'open') {
      trace?.end(opening.kind, this.placement);
      return encodedFailure(ready.codec, opening);
    }
    if (!trace) return opening;
    const { control } = opening;
    return { kind: 'open', control: { grant: (bytes) => control.grant(bytes), cancel: () => (trace.end('cancelled', this.placement), control.cancel()) } };
  }

  /** Where new calls run: none once the service is quiescing. */
  get #serving(): Execution | undefined {
    return this.#quiescing ? undefined : this.#execution;
  }

  /**
   * Serves one request to the service's HTTP handler (docs/api.md §5.8): its
   * body and response cross on `channel`; resolves once `handle` has
   * returned (what it left behind comes on the channel), or with why it did
   * not run or was cut off.
   */
  serveHttp(request: HandlerRequest, channel: MainEnd, deadline: number, signal?: AbortSignal, traced?: RequestTrace): Promise<CallResult> {
    const execution = this.#serving;
    if (!execution) return Promise.resolve({ kind: 'quiesced' });
    const trace = traced?.call(this.name, 'handle');
    const served = execution.run({ kind: 'http', request, channel }, deadline, signal, trace);
    return trace ? this.#traced(trace, served) : served;
  }

  /** `result` once it is in, its call's span ended with what it came to. */
  #traced<R extends { kind: string }>(trace: CallTrace, result: Promise<R>): Promise<R> {
    return result.then(
      (r) => {
        trace.end(r.kind === 'json' || r.kind === 'bytes' ? 'ok' : r.kind, this.placement);
        return r;
      },
      (e: unknown) => {
        trace.end('error', this.placement);
        throw e;
      },
    );
  }

  /**
   * A call across a link (docs/api.md §5.9): function `fn` of the exported
   * interface `iface`, with jco-shaped `args` (the importer's glue lifted
   * them; the catalog checked that both sides have the same types), made
   * where and as any call of it is.
   */
  callExport(iface: string, fn: string, args: unknown[], deadline: number, body?: BodyChannel): Promise<CallResult> {
    const found = this.#exported(iface, fn);
    if (found.kind !== 'found') return Promise.resolve(found);
    return found.execution.run({ kind: 'call', method: found.method, args: { kind: 'arguments', args }, ...(body ? { body } : {}) }, deadline);
  }

  openExportStream(iface: string, fn: string, args: unknown[], deadline: number, stream: StreamOptions, body?: BodyChannel): Promise<StreamOpening> {
    const found = this.#exported(iface, fn);
    if (found.kind !== 'found') return Promise.resolve(found);
    return found.execution.run({ kind: 'stream', method: found.method, args: { kind: 'arguments', args }, options: stream, ...(body ? { body } : {}) }, deadline);
  }

  /** Where a call of `fn` of exported interface `iface` runs now, and its method's index. */
  #exported(iface: string, fn: string): { kind: 'found'; execution: Execution; method: number } | Failure {
    const execution = this.#serving;
    if (!execution) return { kind: 'quiesced' };
    const method = this.descriptor.methods.findIndex((m) => m.interface !== null && interfaceKey(m.interface) === interfaceKey(iface) && m.function.name === fn);
    if (method === -1) return { kind: 'not-invocable', reason: `${this.name} exports no ${iface}#${fn}` };
    return { kind: 'found', execution, method };
  }

  /** Whether `invocation` involves handles, and is made as routeHandleCall decides. */
  involvesHandles(invocation: Invocation): boolean {
    return invocation.method.descriptor.handles !== undefined || invocation.self !== undefined;
  }

  /**
   * Where a call that involves handles (docs/api.md §5.1.2) is made, decided
   * before it is: its body checked, the handles it names looked up. Here, on
   * the instance they live in (or, making handles from none, in its scope's
   * instance); in another worker, where they live or where the scope's
   * handles are made (handle-homes.ts): the HTTP layer forwards the request
   * there, whose worker decides the rest (its limits, its instances); or why
   * it cannot be made.
   */
  routeHandleCall({ method, input, self, forwarded, scope: named }: Invocation): HandleCallRoute | OtherWorker | Failure {
    const codec = method.codec;
    if (!codec) return { kind: 'not-invocable', reason: method.descriptor.reason ?? 'not invocable' };
    const where = new CallHandles(this.#handles, this.descriptor);
    if (self !== undefined) {
      const failure = where.self(self, method);
      if (failure) return failure;
    }
    const execution = this.#serving;
    if (!execution) return { kind: 'quiesced' };
    const checked = where.check(codec, input);
    if (checked) return checked;
    if (where.otherWorker !== undefined) return { kind: 'other-worker', worker: where.otherWorker, for: 'handles' };
    const creates = method.descriptor.handles?.result === true;
    if (creates && this.descriptor.instances.recycleAfter === 1) {
      return { kind: 'handles-refused', details: `${this.name} runs each call on a fresh instance (instance_per_call), so a handle would outlive its instance` };
    }
    const fresh = creates && where.holder === undefined;
    // A call that passes handles runs in their scope; one that makes handles from none, in the scope its request names.
    const scope = fresh ? (named ?? '') : (where.scope ?? '');
    if (fresh && named === undefined && this.descriptor.instances.handleScope === 'required') return { kind: 'scope-required' };
    // Made where the scope's handles live (handle-homes.ts), so that they can be passed together.
    const home = fresh && !forwarded ? this.#homes?.home(this.name, scope) : undefined;
    if (home !== undefined && home !== this.#issuer.workerId) return { kind: 'other-worker', worker: home, for: 'home' };
    return { kind: 'here', execution, codec, where, creates, fresh, scope };
  }

  /** Makes a call that involves handles where `route` says: on this worker's instance, with its own handle table (handle-table.ts). */
  async #invokeRouted({ method, input, deadline, answer, signal, self, client }: Invocation, route: HandleCallRoute): Promise<InvokeResult> {
    const { execution, codec, where, creates, fresh, scope } = route;
    const room = creates ? this.#handles.reserve(scope, client) : undefined;
    if (room && 'full' in room) return { kind: 'too-many-handles', max: room.max, ...(scope === '' ? (room.full === 'client' ? { client: true } : {}) : { scope: redactScope(scope) }) };
    const call: HandleCall = { method: method.index, ...(self !== undefined ? { self } : {}), input };
    const ran = await (fresh && scope !== '' ? this.#scopes.inNamed(scope, execution, call, deadline, signal) : this.#scopes.inDefault(execution, call, deadline, signal, where.holder, fresh)).finally(() => room?.release());
    if ('kind' in ran) return ran;
    const { result, holder } = ran;
    if (result.kind !== 'called') return result;
    if (holder) this.#handles.record(holder, result.issued, result.consumed, where.used, scope, client);
    // A result that holds handles was encoded on its instance, where its resources are (handle-table.ts).
    const { outcome } = result;
    if (outcome.kind !== 'ok') return creates ? outcome : encodedFailure(codec, outcome);
    return returned(method, answer, outcome.value, creates ? (value) => value : codec.encodeResult);
  }

  /**
   * The arguments checked and converted (a large JSON body is left to the
   * instance thread), and where the call will run; or why it cannot be made.
   */
  #prepare(method: Method, input: Invocation['input']): { kind: 'prepared'; execution: Execution; args: Arguments; codec: FunctionCodec } | Failure {
    const codec = method.codec;
    if (!codec) return { kind: 'not-invocable', reason: method.descriptor.reason ?? 'not invocable' };
    const execution = this.#serving;
    if (!execution) return { kind: 'quiesced' };
    const args = callArguments(codec, input);
    return args.kind === 'arguments' || args.kind === 'large-json' ? { kind: 'prepared', execution, args, codec } : args;
  }
}

/** A live handle as the listing shows it (Date.now() times). */
export interface HandleView {
  id: string;
  resource: string;
  /** Its handle scope, shortened (`default` for the default one). */
  scope: string;
  created: number;
  lastUsed: number;
  expires: number;
}

/** A call's value as invoke answers it: the bytes of a list<u8> result when they were asked for, else JSON (`json` makes it). */
function returned(method: Method, answer: Invocation['answer'], value: unknown, json: (value: unknown) => unknown): InvokeResult {
  if (answer === 'bytes' && method.bytesResult) return { kind: 'bytes', bytes: value as Uint8Array, mediaType: method.descriptor.mediaType ?? 'application/octet-stream' };
  return { kind: 'json', value: json(value) };
}

/** A failure with its component-error payload as JSON (the err type's codec); the others as they are. */
function encodedFailure<F extends Failure>(codec: FunctionCodec, failure: F): F {
  return failure.kind === 'component-error' ? { ...failure, payload: codec.encodeError(failure.payload) } : failure;
}
