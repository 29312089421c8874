// One service as a worker hosts it: its method table (method.ts, a codec per
// method, built once) and where its calls run (execution.ts: inline, or on
// instance threads). An Invocation (invocation.ts) comes in; its arguments
// are checked and converted here (arguments.ts), before any instance sees
// them, so a bad request never costs a call; what comes out is the result's
// JSON value or bytes, or a Failure in the execution layer's own words (the
// HTTP layer gives it a status: http/failures.ts).

import type { Logger } from 'pino';
import { serviceName, type Placement, type ServiceDescriptor } from '../../service.js';
import type { FunctionCodec } from '../../wit/codec.js';
import { callArguments, type Arguments } from './arguments.js';
import { componentInstances, Execution, type InstanceLimits } from './execution.js';
import type { Failure, Invocation, InvokeResult, StreamFailure, StreamOpening, StreamOptions } from './invocation.js';
import { methodTable, type Method } from './method.js';
import type { Move, PlacementSettings } from './placement.js';

/** What every hosted service gets from the worker's configuration. */
export interface HostingOptions extends InstanceLimits {
  log: Logger;
  /** A service moved between inline and threads (execution.ts): for the metric and the listing. */
  moved?: (service: HostedService, move: Move) => void;
  /** The placement policy's settings (tests shorten the probation). */
  placement?: PlacementSettings;
}

export class HostedService {
  readonly name: string;
  readonly #methods: Map<string, Method>;
  /** Absent while quiesced: a quiesced service holds no instances. */
  #execution: Execution | undefined;
  #quiescing: Promise<void> | undefined;

  private constructor(readonly descriptor: ServiceDescriptor) {
    this.name = serviceName(descriptor.id);
    this.#methods = methodTable(descriptor.methods);
  }

  /** Compiles the component and starts its instances: a component that cannot instantiate fails here, not on its first call. */
  static async start(descriptor: ServiceDescriptor, options: HostingOptions): Promise<HostedService> {
    const hosted = new HostedService(descriptor);
    if (!descriptor.quiesced) {
      const log = options.log.child({ service: hosted.name });
      const onMove = options.moved && ((move: Move) => options.moved!(hosted, move));
      hosted.#execution = await Execution.start(componentInstances(descriptor, options, log), { log, ...(options.placement ? { placement: options.placement } : {}), ...(onMove ? { onMove } : {}) });
    }
    return hosted;
  }

  method(name: string): Method | undefined {
    return this.#methods.get(name);
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
      await this.#execution?.drain();
      this.#execution = undefined;
    })();
    return this.#quiescing;
  }

  /** Ends the service's instances once the calls already made have finished (it was replaced or removed). */
  drain(): Promise<void> {
    return this.#execution?.drain() ?? Promise.resolve();
  }

  /** Ends the instances at once (they never served: a restart that was called off). */
  close(): Promise<void> {
    return this.#execution?.close() ?? Promise.resolve();
  }

  /** Makes the call `invocation` asks for: the result as JSON, or as raw bytes (a list<u8> result whose bytes were asked for), or why there is none. */
  async invoke({ method, input, deadline, answer, signal }: Invocation): Promise<InvokeResult> {
    const ready = this.#prepare(method, input);
    if (ready.kind !== 'prepared') return ready;
    const result = await ready.execution.call(method.index, ready.args, deadline, signal);
    if (result.kind !== 'ok') return encodedFailure(ready.codec, result);
    if (answer === 'bytes' && method.bytesResult) return { kind: 'bytes', bytes: result.value as Uint8Array, mediaType: method.descriptor.mediaType ?? 'application/octet-stream' };
    return { kind: 'json', value: ready.codec.encodeResult(result.value) };
  }

  /**
   * Calls streaming method `invocation.method` (docs/api.md §5.1.1): `open`
   * once it has returned its resource, after which the items go to
   * `stream.sink`; or why it did not open.
   */
  async openStream({ method, input, deadline, signal }: Invocation, stream: StreamOptions): Promise<StreamOpening> {
    const ready = this.#prepare(method, input);
    if (ready.kind !== 'prepared') return ready;
    const { sink } = stream;
    const encoded = { chunk: (bytes: Uint8Array) => sink.chunk(bytes), end: (failure?: StreamFailure) => sink.end(failure && encodedFailure(ready.codec, failure)) };
    const opening = await ready.execution.openStream(method.index, ready.args, deadline, { ...stream, sink: encoded, ...(signal ? { signal } : {}) });
    return opening.kind === 'open' ? opening : encodedFailure(ready.codec, opening);
  }

  /**
   * The arguments checked and converted (a large JSON body is left to the
   * instance thread), and where the call will run; or why it cannot be made.
   */
  #prepare(method: Method, input: Invocation['input']): { kind: 'prepared'; execution: Execution; args: Arguments; codec: FunctionCodec } | Failure {
    const codec = method.codec;
    if (!codec) return { kind: 'not-invocable', reason: method.descriptor.reason ?? 'not invocable' };
    const execution = this.#quiescing ? undefined : this.#execution;
    if (!execution) return { kind: 'quiesced' };
    const args = callArguments(codec, input);
    return args.kind === 'arguments' || args.kind === 'large-json' ? { kind: 'prepared', execution, args, codec } : args;
  }
}

/** A failure with its component-error payload as JSON (the err type's codec); the others as they are. */
function encodedFailure<F extends Failure>(codec: FunctionCodec, failure: F): F {
  return failure.kind === 'component-error' ? { ...failure, payload: codec.encodeError(failure.payload) } : failure;
}
