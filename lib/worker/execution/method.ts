// A service's methods as a worker calls them: each with its codec (built
// once, when the service is hosted) and what its signature means for the
// request and the answer (raw bytes in, raw bytes out).

import type { MethodDescriptor } from '../../service.js';
import { functionCodec, typeCodec, type FunctionCodec } from '../../wit/codec.js';
import type { StreamSignature } from '../../wit/streaming.js';
import { bytesResult, isBytes, type WitFunction } from '../../wit/types.js';

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

/** The service's methods by every name they answer to (their aliases). */
export function methodTable(methods: MethodDescriptor[]): Map<string, Method> {
  const table = new Map<string, Method>();
  methods.forEach((descriptor, index) => {
    const fn = descriptor.function;
    const method: Method = { descriptor, index, bytesParam: fn.params.length === 1 && isBytes(fn.params[0].type), bytesResult: bytesResult(fn) };
    if (descriptor.invocable) method.codec = descriptor.stream ? streamCodec(fn, descriptor.stream) : functionCodec(fn);
    for (const alias of descriptor.aliases) table.set(alias, method);
  });
  return table;
}

/** The codec of a function's arguments alone (all an instance thread needs to decode a large body: arguments.ts). */
export function argumentsCodec(fn: WitFunction): FunctionCodec {
  return functionCodec({ ...fn, result: null });
}

/**
 * A streaming method's codec: its arguments as any method's; its result is
 * the resource, which stays in the instance; its errors are E of `next`'s
 * result<option<T>, E>, as they come from the stream.
 */
function streamCodec(fn: WitFunction, stream: StreamSignature): FunctionCodec {
  const encodeError = stream.error ? typeCodec(stream.error).encode : () => null;
  return { ...argumentsCodec(fn), encodeError };
}
