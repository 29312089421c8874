// The handler host of WASI 0.3: rt's own wasi:http/types@0.3 (fields,
// requests and responses, request options), the exchange that serves one
// request (handler.ts) and wasi:http/client's send (client.ts). The rest of the 0.3 line a handler imports
// (clocks, random, cli) is the sandbox's (sandbox/wasi-p3.ts), as for any 0.3
// component: nothing there blocks a thread, so nothing must come together.
//
// Use: give every 0.3 instance `httpTypes` (the glue checks the objects it is
// handed against these classes), and for each request make a
// HandlerExchange: pass its `request` to the export's `handle`, then `send`
// what it returned (or `refused` its error-code).

import { WASI_0_3 } from '../../../wasi-lines.js';
import type { OutgoingChannel } from '../core/outgoing-channel.js';
import { client, linkedHandler } from './client.js';
import { Fields } from './fields.js';
import { Request, RequestOptions, Response } from './http-types.js';

export { HandlerExchange, type Guard } from './handler.js';

/** wasi:http/types@0.3, keyed as the sandbox's tables are. */
export const httpTypes: Record<string, object> = { [`wasi:http/types@${WASI_0_3}`]: { Fields, Request, Response, RequestOptions } };

/** wasi:http/client@0.3 over the thread's outgoing channel; with `handlerLink`, the wasi:http/handler a middleware imports too, served by the service linked to it. */
export function clientImports(channel: OutgoingChannel, handlerLink?: string): Record<string, object> {
  return { [`wasi:http/client@${WASI_0_3}`]: client(channel), ...(handlerLink ? { [`wasi:http/handler@${WASI_0_3}`]: linkedHandler(channel, handlerLink) } : {}) };
}
