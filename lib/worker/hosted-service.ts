// One service as a worker hosts it: its method table (with a codec per
// method, built once) and its pool of instances (instance-pool.ts). Arguments
// are checked and converted here, on the main thread, so a bad request never
// costs an instance a call; outcomes become HTTP answers here too.

import type { Logger } from 'pino';
import { ApiError } from '../api-error.js';
import { serviceName, type MethodDescriptor, type ServiceDescriptor } from '../service.js';
import { CodecError, functionCodec, type FunctionCodec } from '../wit/codec.js';
import { bytesResult, isBytes } from '../wit/types.js';
import { compileCoreModules } from './component.js';
import { InstancePool } from './instance-pool.js';

/** What every hosted service gets from the worker's configuration. */
export interface HostingOptions {
  timeoutMs: number;
  memoryCapBytes: number;
  log: Logger;
}

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
  #pool: InstancePool | undefined;
  #quiescing: Promise<void> | undefined;

  private constructor(
    readonly descriptor: ServiceDescriptor,
    pool: (name: string) => InstancePool,
  ) {
    this.name = serviceName(descriptor.id);
    if (!descriptor.quiesced) this.#pool = pool(this.name);
    descriptor.methods.forEach((m, index) => {
      const fn = m.function;
      const method: Method = { descriptor: m, index, bytesParam: fn.params.length === 1 && isBytes(fn.params[0]!.type), bytesResult: bytesResult(fn) };
      if (m.invocable) method.codec = functionCodec(m.function);
      for (const alias of m.aliases) this.#methods.set(alias, method);
    });
  }

  /** Compiles the component and starts its instances: a component that cannot instantiate fails here, not on its first call. */
  static async start(descriptor: ServiceDescriptor, options: HostingOptions): Promise<HostedService> {
    const modules = descriptor.quiesced ? [] : await compileCoreModules(descriptor.artifact, options.memoryCapBytes);
    const { artifact, interface: iface, instances, config } = descriptor;
    const hosted = new HostedService(descriptor, (service) => {
      const log = options.log.child({ service });
      return new InstancePool(
        {
          service,
          entry: artifact.entry,
          modules,
          importSpecifiers: artifact.importSpecifiers,
          imports: iface.imports,
          methods: descriptor.methods.map((m) => ({ exportKey: m.exportKey, jsName: m.jsName })),
          recycleAfter: instances.recycleAfter,
          memoryCapBytes: options.memoryCapBytes,
          env: Object.entries(descriptor.env),
          init: descriptor.init,
          config: config?.bytes ?? new Uint8Array(),
          configEntries: config?.entries ?? [],
          paths: descriptor.paths,
          outboundHosts: descriptor.outboundHosts,
        },
        {
          size: instances.poolSize,
          timeoutMs: options.timeoutMs,
          onOutput: (stream, text, dropped) => log.info({ stream, ...(dropped ? { dropped } : {}) }, text.trimEnd()),
        },
      );
    });
    await hosted.#pool?.start();
    return hosted;
  }

  method(name: string): Method | undefined {
    return this.#methods.get(name);
  }

  liveInstances(): number {
    return this.#pool?.live ?? 0;
  }

  get quiesced(): boolean {
    return this.#quiescing !== undefined || this.descriptor.quiesced;
  }

  /** Refuses new calls from now on; resolves once the running ones have finished and the instances are gone. */
  quiesce(): Promise<void> {
    this.#quiescing ??= (async () => {
      await this.#pool?.drain();
      this.#pool = undefined;
    })();
    return this.#quiescing;
  }

  /** Ends the service's instances once the calls already made have finished (it was replaced or removed). */
  stop(): Promise<void> {
    return this.#pool?.drain() ?? Promise.resolve();
  }

  /** Ends the instances at once (they never served: a restart that was called off). */
  discard(): Promise<void> {
    return this.#pool?.close() ?? Promise.resolve();
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
    const pool = this.#quiescing ? undefined : this.#pool;
    if (!pool) throw new ApiError(503, 'service quiesced', `${this.name} is quiesced: restart it to serve again`, where);
    let args: unknown[];
    try {
      args = codec.decodeArgs(body);
    } catch (e) {
      if (e instanceof CodecError) throw new ApiError(400, 'invalid arguments', e.message, where);
      throw e;
    }
    const outcome = await pool.call(method.index, args);
    switch (outcome.status) {
      case 'ok':
        return rawBytes && method.bytesResult ? outcome.value : codec.encodeResult(outcome.value);
      case 'component-error': {
        const payload = codec.encodeError(outcome.payload);
        throw new ApiError(500, 'method returned an error', typeof payload === 'string' ? payload : JSON.stringify(payload), { ...where, value: payload });
      }
      case 'trap':
        throw new ApiError(500, outcome.kind, outcome.message, where);
      case 'timeout':
        throw new ApiError(504, 'call timed out', `the call ran past http.request_timeout_seconds and was cut off`, where);
    }
  }
}
