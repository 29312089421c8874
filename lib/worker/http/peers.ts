// Requests between the workers of one run (docs/api.md §5.1.2, docs/architecture.md).
//
// A handle lives in one instance of one worker, but node:cluster gives a
// connection to whichever worker accepts it. So each worker also listens on
// a unix socket of its own, in a directory the primary made for the run
// (0700: only rt's user can connect), named by its worker id, which every
// handle id carries. A request for a handle another worker holds is proxied
// to that worker's socket and answered as the owner answers it: the client
// sees one request, logged and counted once, by the worker it reached.
//
// A request that arrived through the socket is never forwarded again,
// whatever it says (the server it came in by decides, not a header): a
// forward reaches its owner or fails, and cannot loop. An owner that is gone
// (its socket removed or refusing, or the connection cut before it answered)
// took its handles with it: 410.

import { readdir } from 'node:fs/promises';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { ApiError } from '../../errors.js';
import { peerSocketPath } from '../../ipc.js';
import type { Logger } from '../../log.js';
import type { Input } from '../execution/invocation.js';
import type { ApiCall, Reply } from './api-call.js';

/** The header a forward carries the client's address in (exchange.ts): believed only on a request that came through a peer socket. */
export const CLIENT_HEADER = 'x-rt-client';

/** Requests that came from another worker's forward. */
const fromPeers = new WeakSet<IncomingMessage>();

/** Whether `req` reached this worker through its peer socket (forwarded by another worker). */
export function cameFromPeer(req: IncomingMessage): boolean {
  return fromPeers.has(req);
}

/** Hop-by-hop headers (RFC 9110 §7.6.1). */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];
/** Request headers not sent on: hop-by-hop ones, and those of a body that goes on decoded and whole. */
const NOT_PASSED_ON = new Set([...HOP_BY_HOP, 'expect', 'content-length', 'content-encoding']);
/** Headers of the owner's answer the worker the client reached sets itself (exchange.ts, app.ts: request id, worker, CORS). */
const SET_HERE = new Set([...HOP_BY_HOP, 'date', 'x-request-id', 'x-rt-worker', 'vary']);

/** How long the owner may take past the request's own deadline before the forward gives up (it answers 504 by its deadline itself). */
const BACKSTOP_MS = 1_000;
/** How long a listing waits for each other worker's part. */
const GATHER_TIMEOUT_MS = 2_000;

export class Peers {
  /** Connections to the other workers, kept open between forwards. */
  readonly #agent = new Agent({ keepAlive: true });

  constructor(
    private readonly dir: string,
    private readonly workerId: number,
    private readonly log: Logger,
  ) {}

  /** Serves `server` (the worker's request handler behind it) on this worker's peer socket; what arrives there is marked as forwarded. */
  listen(server: Server): Server {
    server.prependListener('request', (req: IncomingMessage) => fromPeers.add(req));
    return server.listen({ path: peerSocketPath(this.dir, this.workerId), exclusive: true });
  }

  /**
   * The answer worker `owner` gives to `call`'s request, with `input`: its
   * body, read here first as the owner would read it (decoded, within the
   * body limits), and sent on whole: bodies of calls are bounded and small,
   * and a request sent whole either reaches the owner or fails before the
   * owner has it.
   */
  async forward(call: ApiCall, owner: number, input: Input, purpose: 'handles' | 'home' = 'handles'): Promise<Reply> {
    const { req, state } = call;
    if (cameFromPeer(req)) {
      // The worker that forwarded it read the id the same way: a run's ids name one worker each.
      throw new ApiError('RT_ERR_INTERNAL', `a request forwarded to worker ${this.workerId} names a handle of worker ${owner}`);
    }
    state.forwardedTo = owner;
    const body = input.kind === 'none' ? new Uint8Array() : input.bytes;
    const headers = passedOn(req.headers);
    headers['x-request-id'] = state.requestId;
    headers[CLIENT_HEADER] = state.client;
    headers['content-length'] = String(body.byteLength);
    const answer = await this.#send(call, owner, headers, body).catch((e: unknown) => {
      throw forwardError(e, owner, purpose);
    });
    const kept: string[] = [];
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined || SET_HERE.has(name)) continue;
      for (const one of Array.isArray(value) ? value : [value]) kept.push(name, one);
    }
    return { kind: 'relayed', status: answer.statusCode ?? 502, headers: kept, body: answer };
  }

  /**
   * The owner's answer to `call`'s request with `body`, once its headers are in.
   * A kept-alive connection the owner closed while idle fails the request
   * sent on it before the owner reads it: such a request is sent once more,
   * on a new connection. (An owner that died while it held the request fails
   * that second one too, as it would have failed anyway.)
   */
  #send(call: ApiCall, owner: number, headers: Record<string, string | string[]>, body: Uint8Array, retry = true): Promise<IncomingMessage> {
    const { req, res, state } = call;
    const upstream = httpRequest({ socketPath: peerSocketPath(this.dir, owner), method: req.method, path: req.url, headers, agent: this.#agent });
    // A client that leaves takes the forward with it: the owner sees it leave too (its call, if still waiting, is never made).
    const leave = () => upstream.destroy();
    res.once('close', leave);
    const backstop = setTimeout(() => upstream.destroy(new ForwardTimeout()), Math.max(0, state.deadline - performance.now()) + BACKSTOP_MS);
    return new Promise<IncomingMessage>((resolve, reject) => {
      upstream.once('response', (answer) => {
        clearTimeout(backstop);
        answer.once('close', () => res.off('close', leave));
        resolve(answer);
      });
      upstream.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(backstop);
        res.off('close', leave);
        const stale = upstream.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
        if (stale && retry && !res.destroyed) resolve(this.#send(call, owner, headers, body, false));
        else reject(e);
      });
      upstream.end(body);
    });
  }

  /** Every other worker's answer to GET `path` (a JSON body each); a worker that does not answer in time, or is gone, is left out. */
  async gather<T>(path: string): Promise<T[]> {
    const others = (await readdir(this.dir).catch(() => [] as string[]))
      .map((name) => /^(\d+)\.sock$/.exec(name)?.[1])
      .filter((id): id is string => id !== undefined && Number(id) !== this.workerId)
      .map(Number);
    const answers = await Promise.all(others.map((worker) => this.#get<T>(worker, path)));
    return answers.flatMap((a) => (a === undefined ? [] : [a]));
  }

  #get<T>(worker: number, path: string): Promise<T | undefined> {
    return new Promise((resolve) => {
      const req = httpRequest({ socketPath: peerSocketPath(this.dir, worker), path, headers: { host: 'rt-peer', accept: 'application/json' }, timeout: GATHER_TIMEOUT_MS, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return resolve(undefined);
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as T);
          } catch {
            resolve(undefined);
          }
        });
        res.on('error', () => resolve(undefined));
      });
      req.on('timeout', () => req.destroy(new ForwardTimeout()));
      req.on('error', (e) => {
        this.log.debug({ err: e, peer: worker }, 'a worker left out of a listing');
        resolve(undefined);
      });
      req.end();
    });
  }
}

class ForwardTimeout extends Error {
  constructor() {
    super('the worker holding the handle did not answer in time');
  }
}

function passedOn(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !NOT_PASSED_ON.has(name)) out[name] = value;
  return out;
}

/**
 * Why a forward failed, as its answer: an owner that is gone took its
 * handles with it (410); a home that is gone has a replacement on its way
 * (503: handles made then live there).
 */
function forwardError(e: unknown, owner: number, purpose: 'handles' | 'home'): ApiError {
  const holds = purpose === 'handles' ? 'which holds the handle' : "where the service's handles live";
  if (e instanceof ForwardTimeout) return new ApiError('RT_ERR_CALL_TIMEOUT', `worker ${owner}, ${holds}, did not answer by the request's deadline`);
  const code = (e as NodeJS.ErrnoException).code;
  const gone = code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE';
  if (gone && purpose === 'home') return new ApiError('RT_ERR_NOT_READY', `worker ${owner}, where the service's handles live, has ended; its replacement makes them once it has started`, {}, { 'Retry-After': '1' });
  if (gone) {
    return new ApiError('RT_ERR_HANDLE_GONE', `the handle has ended: worker ${owner}, which held it, has ended`);
  }
  return new ApiError('RT_ERR_INTERNAL', `forwarding to worker ${owner} failed: ${e instanceof Error ? e.message : String(e)}`);
}
