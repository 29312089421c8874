// One service as a worker hosts it: its method table (with a codec per
// method, built once) and its live instance. An instance is reused across
// calls; a call that traps discards it and the next call gets a fresh one
// (contract §5.1). Calls are synchronous wasm, so two calls never interleave
// inside one instance.

import { ApiError } from '../api-error.js';
import { serviceName, type MethodDescriptor, type ServiceDescriptor } from '../service.js';
import { CodecError, functionCodec, type FunctionCodec } from '../wit/codec.js';
import { bytesResult, isBytes } from '../wit/types.js';
import type { ComponentExports, LoadedComponent } from './component.js';
import { ComponentExit, UnsatisfiedImportError } from './host.js';

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


type Bound = (...args: unknown[]) => unknown;

interface Instance {
  functions: (Bound | undefined)[];
}

export class HostedService {
  readonly name: string;
  readonly #methods = new Map<string, Method>();
  readonly #ordered: Method[];
  #instance: Instance | undefined;
  #pending: Promise<Instance> | undefined;

  constructor(
    readonly descriptor: ServiceDescriptor,
    readonly component: LoadedComponent,
  ) {
    this.name = serviceName(descriptor.id);
    this.#ordered = descriptor.methods.map((m, index) => {
      const fn = m.function;
      const method: Method = { descriptor: m, index, bytesParam: fn.params.length === 1 && isBytes(fn.params[0]!.type), bytesResult: bytesResult(fn) };
      if (m.invocable) method.codec = functionCodec(m.function);
      return method;
    });
    for (const method of this.#ordered) for (const alias of method.descriptor.aliases) this.#methods.set(alias, method);
  }

  method(name: string): Method | undefined {
    return this.#methods.get(name);
  }

  /** Creates the first instance, so a component that cannot instantiate fails at load rather than on first call. */
  async warmUp(): Promise<void> {
    await this.#currentInstance();
  }

  /**
   * Calls `method` with the parsed JSON body (or `[bytes]`); resolves to the
   * JSON value of `result`, or to the raw bytes when `rawBytes` and the
   * method's result is list<u8>.
   */
  async invoke(method: Method, body: unknown, rawBytes = false): Promise<unknown> {
    const where = { service: this.name, method: method.descriptor.name };
    const codec = method.codec;
    if (!codec) throw new ApiError(400, 'method not invocable', method.descriptor.reason ?? 'not invocable', where);
    let args: unknown[];
    try {
      args = codec.decodeArgs(body);
    } catch (e) {
      if (e instanceof CodecError) throw new ApiError(400, 'invalid arguments', e.message, where);
      throw e;
    }
    const instance = this.#instance ?? (await this.#currentInstance());
    const fn = instance.functions[method.index];
    if (!fn) throw new ApiError(500, 'method missing', `the component does not export ${method.descriptor.name} where its type says`, where);
    let value: unknown;
    try {
      value = fn(...args);
    } catch (e) {
      if (codec.throwsOnErr && isComponentError(e)) {
        const payload = codec.encodeError(e.payload);
        throw new ApiError(500, 'method returned an error', typeof payload === 'string' ? payload : JSON.stringify(payload), {
          ...where,
          value: payload,
        });
      }
      this.#discard(instance);
      throw new ApiError(500, trapKind(e), errorText(e), where);
    }
    return rawBytes && method.bytesResult ? value : codec.encodeResult(value);
  }

  #currentInstance(): Promise<Instance> {
    if (this.#instance) return Promise.resolve(this.#instance);
    this.#pending ??= this.#instantiate().finally(() => (this.#pending = undefined));
    return this.#pending;
  }

  async #instantiate(): Promise<Instance> {
    const exports = await this.component.instantiate();
    const instance: Instance = { functions: this.#ordered.map((m) => lookup(exports, m.descriptor)) };
    this.#instance = instance;
    return instance;
  }

  /** Drops a trapped instance; a replacement is started right away so the next call rarely waits. */
  #discard(instance: Instance): void {
    if (this.#instance !== instance) return;
    this.#instance = undefined;
    this.#currentInstance().catch(() => {
      // The next call retries and reports the error.
    });
  }
}

function lookup(exports: ComponentExports, m: MethodDescriptor): Bound | undefined {
  const container = m.exportKey === null ? exports : (exports[m.exportKey] as Record<string, unknown> | undefined);
  const fn = container?.[m.jsName];
  return typeof fn === 'function' ? (fn as Bound) : undefined;
}

/** jco throws a ComponentError carrying `payload` for the err case of a top-level result<T, E>. */
function isComponentError(e: unknown): e is { payload: unknown } {
  return e instanceof Error && e.constructor.name === 'ComponentError' && 'payload' in e;
}

function trapKind(e: unknown): string {
  if (e instanceof UnsatisfiedImportError) return 'unsatisfied import';
  if (e instanceof ComponentExit) return 'component exited';
  return 'component trapped';
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  return String(e);
}
