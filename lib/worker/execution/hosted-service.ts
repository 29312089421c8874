// One service as a worker hosts it: its method table (with a codec per
// method, built once) and where its calls run (execution.ts: inline, or on
// instance threads). Arguments are checked and converted here, before any
// instance sees them, so a bad request never costs a call; outcomes become
// HTTP answers here too.

import type { Logger } from 'pino';
import { ApiError } from '../../errors.js';
import { serviceName, type MethodDescriptor, type Placement, type ServiceDescriptor } from '../../service.js';
import { CodecError, functionCodec, typeCodec, type FunctionCodec } from '../../wit/codec.js';
import type { StreamSignature } from '../../wit/streaming.js';
import { bytesResult, isBytes } from '../../wit/types.js';
import type { CallOutcome } from './component-instance.js';
import { Execution } from './execution.js';
import type { Move, PlacementSettings } from './placement.js';
import type { StreamFailure, StreamHandle, StreamOptions } from './instance-pool.js';
import { invalidArguments, LargeJsonBody, type Arguments } from './large-body.js';

/** What every hosted service gets from the worker's configuration. */
export interface HostingOptions {
  timeoutMs: number;
  memoryCapBytes: number;
  /** The JS heap limit of each instance thread. */
  threadHeapMb: number;
  log: Logger;
  /** A service moved between inline and threads (execution.ts): for the metric and the listing. */
  moved?: (service: HostedService, move: Move) => void;
  /** The placement policy's settings (tests shorten the probation). */
  placement?: PlacementSettings;
}

/** A call's answer: the result's JSON value, or its raw bytes (a list<u8> result, unless JSON was asked for). */
export type InvokeResult = { kind: 'json'; value: unknown } | { kind: 'bytes'; bytes: Uint8Array };

/** The 504 of a call, of one `next` of a stream, and of a whole stream. */
const TIMEOUTS = {
  call: ['RT_ERR_CALL_TIMEOUT', "the call did not finish within http.request_timeout_seconds of the request's arrival and was cut off"],
  next: ['RT_ERR_CALL_TIMEOUT', 'a next call of the stream did not return within http.request_timeout_seconds and was cut off'],
  stream: ['RT_ERR_STREAM_TIMEOUT', "the stream did not end within http.stream_timeout_seconds of the request's arrival and was ended"],
} as const;

/** Seconds a client refused for a full queue is asked to wait. */
const RETRY_AFTER_SECONDS = 1;

export interface Method {
  descriptor: MethodDescriptor;
  /** Index into the instance's bound function table. */
  index: number;
  /** Absent when the method is not invocable. */
  codec?: FunctionCodec;
  /** The only parameter is list<u8>: the body may be raw bytes. */
  bytesParam: boolean;
  /** The result (or its ok case) is list<u8>: answered as raw bytes unless JSON is asked for. */
  bytesResult: boolean;
}

export class HostedService {
  readonly name: string;
  readonly #methods = new Map<string, Method>();
  /** Absent while quiesced: a quiesced service holds no instances. */
  #execution: Execution | undefined;
  #quiescing: Promise<void> | undefined;

  private constructor(readonly descriptor: ServiceDescriptor) {
    this.name = serviceName(descriptor.id);
    descriptor.methods.forEach((m, index) => {
      const fn = m.function;
      const method: Method = { descriptor: m, index, bytesParam: fn.params.length === 1 && isBytes(fn.params[0].type), bytesResult: bytesResult(fn) };
      if (m.invocable) method.codec = m.stream ? streamCodec(m.function, m.stream) : functionCodec(m.function);
      for (const alias of m.aliases) this.#methods.set(alias, method);
    });
  }

  /** Compiles the component and starts its instances: a component that cannot instantiate fails here, not on its first call. */
  static async start(descriptor: ServiceDescriptor, options: HostingOptions): Promise<HostedService> {
    const hosted = new HostedService(descriptor);
    if (!descriptor.quiesced) {
      const onMove = options.moved && ((move: Move) => options.moved!(hosted, move));
      hosted.#execution = await Execution.start(descriptor, { ...options, service: hosted.name, log: options.log.child({ service: hosted.name }), ...(onMove ? { onMove } : {}) });
    }
    return hosted;
  }

  method(name: string): Method | undefined {
    return this.#methods.get(name);
  }

  liveInstances(): number {
    return this.#execution?.live ?? 0;
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
  stop(): Promise<void> {
    return this.#execution?.drain() ?? Promise.resolve();
  }

  /** Ends the instances at once (they never served: a restart that was called off). */
  discard(): Promise<void> {
    return this.#execution?.close() ?? Promise.resolve();
  }

  /**
   * Calls `method` with the parsed JSON body (or `[bytes]`, or a large JSON
   * body for the instance thread to decode), by `deadline`
   * (performance.now() time, counted from the request's arrival); `signal`
   * aborts when the client leaves. Failures are thrown as the ApiError it
   * answers with (docs/api.md §5.5).
   */
  async invoke(method: Method, body: unknown, { rawBytes, deadline, signal }: { rawBytes: boolean; deadline: number; signal?: AbortSignal }): Promise<InvokeResult> {
    const { execution, args, codec } = this.#prepare(method, body);
    const outcome = await execution.call(method.index, args, deadline, signal);
    if (outcome.status !== 'ok') throw this.failure(method, outcome);
    return rawBytes && method.bytesResult ? { kind: 'bytes', bytes: outcome.value as Uint8Array } : { kind: 'json', value: codec.encodeResult(outcome.value) };
  }

  /**
   * Calls streaming `method` (docs/api.md §5.1.1): resolves once it has returned
   * its resource, after which the items go to `options.sink`. A failure before
   * that is thrown as the ApiError it answers with (docs/api.md §5.5).
   */
  async openStream(method: Method, body: unknown, deadline: number, options: StreamOptions): Promise<StreamHandle> {
    const { execution, args } = this.#prepare(method, body);
    const outcome = await execution.openStream(method.index, args, deadline, options);
    if (outcome.status !== 'ok') throw this.failure(method, outcome);
    return outcome.value as StreamHandle;
  }

  /**
   * The arguments checked and converted (a large JSON body is left to the
   * instance thread), and where the call will run; ApiErrors for a method
   * that cannot be called now or a body that does not fit.
   */
  #prepare(method: Method, body: unknown): { execution: Execution; args: Arguments; codec: FunctionCodec } {
    const codec = method.codec;
    if (!codec) throw new ApiError('RT_ERR_METHOD_NOT_INVOCABLE', method.descriptor.reason ?? 'not invocable', this.#where(method));
    const execution = this.#quiescing ? undefined : this.#execution;
    if (!execution) throw new ApiError('RT_ERR_SERVICE_QUIESCED', `${this.name} is quiesced: restart it to serve again`, this.#where(method));
    if (body instanceof LargeJsonBody) return { execution, args: body, codec };
    try {
      return { execution, args: codec.decodeArgs(body), codec };
    } catch (e) {
      if (e instanceof CodecError) throw this.failure(method, { status: 'bad-arguments', ...invalidArguments(e) });
      throw e;
    }
  }

  /** The answer (docs/api.md §5.1, §5.5) to a call or a stream that did not succeed. */
  failure(method: Method, outcome: Exclude<CallOutcome, { status: 'ok' }> | StreamFailure): ApiError {
    const where = this.#where(method);
    switch (outcome.status) {
      case 'component-error': {
        const payload = method.codec!.encodeError(outcome.payload);
        return new ApiError('RT_ERR_METHOD_RETURNED_ERROR', typeof payload === 'string' ? payload : JSON.stringify(payload), { ...where, value: payload });
      }
      case 'trap':
        return new ApiError(outcome.code, outcome.message, where);
      case 'timeout': {
        const [code, details] = TIMEOUTS['what' in outcome ? outcome.what : 'call'];
        return new ApiError(code, details, where);
      }
      case 'overloaded':
        return new ApiError('RT_ERR_SERVICE_OVERLOADED', `${this.name} has max_queue calls waiting in this worker already; retry later`, where, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
      case 'abandoned':
        return new ApiError('RT_ERR_CLIENT_CLOSED_REQUEST', 'the client closed the connection while its call waited for an instance; it was not run', where);
      case 'bad-arguments':
        return new ApiError(outcome.code, outcome.details, where);
    }
  }

  #where(method: Method): { service: string; method: string } {
    return { service: this.name, method: method.descriptor.name };
  }
}

/**
 * A streaming method's codec: its arguments as any method's; its result is
 * the resource, which stays in the instance; its errors are E of `next`'s
 * result<option<T>, E>, as they come from the stream.
 */
function streamCodec(fn: MethodDescriptor['function'], stream: StreamSignature): FunctionCodec {
  const encodeError = stream.error ? typeCodec(stream.error).encode : () => null;
  return { ...functionCodec({ ...fn, result: null }), encodeError };
}
