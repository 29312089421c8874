// A service's methods as a worker calls them: each with its codec (built
// once, when the service is hosted) and what its signature means for the
// request and the answer (raw bytes in, raw bytes out).

import type { MethodDescriptor } from '../../service.js';
import { asInvoked, bodyStreamParam } from '../../wit/async-abi.js';
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
  /** It takes a stream<T>: the request body, read as it arrives; the other arguments come from the query string (docs/api.md §5.9). */
  bodyStream: boolean;
}

/** The service's methods, in descriptor order (a resource's constructor and methods too: they answer to no name). */
export function methodList(methods: MethodDescriptor[]): Method[] {
  return methods.map((descriptor, index) => {
    const fn = descriptor.function;
    const params = callParams(descriptor);
    const method: Method = { descriptor, index, bytesParam: params.length === 1 && isBytes(params[0].type), bytesResult: bytesResult(fn), bodyStream: bodyStreamParam(fn) !== undefined };
    if (descriptor.invocable) method.codec = callCodec(descriptor);
    return method;
  });
}

/** The methods by every name they answer to (their aliases). */
export function methodTable(methods: Method[]): Map<string, Method> {
  return new Map(methods.flatMap((m) => m.descriptor.aliases.map((alias) => [alias, m] as const)));
}

/** The parameters a request gives: all but a resource method's `self`, which its handle supplies (docs/api.md §5.1.2). */
function callParams(d: MethodDescriptor): WitFunction['params'] {
  return d.member?.kind === 'method' ? d.function.params.slice(1) : d.function.params;
}

/** A method's codec: the parameters a request gives, and its result (a streaming method's: its stream's errors). */
export function callCodec(d: MethodDescriptor): FunctionCodec {
  if (d.stream) return streamCodec(d.function, d.stream);
  return functionCodec(asInvoked({ ...d.function, params: callParams(d) }));
}

/** The codec of a function's arguments alone (all an instance thread needs to decode a large body: arguments.ts). */
export function argumentsCodec(fn: WitFunction): FunctionCodec {
  return functionCodec({ ...asInvoked(fn), result: null });
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
