// Control operations (restart, quiesce, reload) change what runs, so a web
// page on a foreign site must not trigger them from an operator's browser
// (docs/api.md §5.6). A browser says where a request comes from (`Origin`,
// `Sec-Fetch-Site`) and cannot be made to lie about it; `curl` and scripts
// send neither, and pass, unless `http.control.token` is set. CORS alone
// does not protect these routes: a "simple" cross-origin POST (text/plain)
// is sent without a preflight, and carried out whatever the answer's CORS
// headers say.

import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../errors.js';
import { normalOrigin } from '../../origin.js';
import type { Config } from '../../config/index.js';

/** What a request says about where it comes from and who sends it. */
export interface ControlCredentials {
  origin?: string;
  host?: string;
  secFetchSite?: string;
  authorization?: string;
}

export interface ControlPolicy {
  /** Listed origins, normalised (`https://admin.example`); `*` lets any origin through. */
  origins: ReadonlySet<string>;
  /** SHA-256 of `http.control.token`, when set: digests compare in constant time whatever the lengths. */
  tokenDigest?: Buffer;
}

export function controlPolicy({ allowed_origins, token }: Config['http']['control']): ControlPolicy {
  return { origins: new Set(allowed_origins.map(normalOrigin)), ...(token === undefined ? {} : { tokenDigest: sha256(token) }) };
}

/**
 * The control routes (docs/api.md §5.2–§5.4), below `/api`: the operations
 * table declares them from this list (operations.ts), and the guard and CORS
 * know them by it, so a new control route cannot be left unguarded.
 */
export const CONTROL_ROUTES = [
  { op: 'restart', method: 'POST', path: '/services/:domain/:service/restart' },
  { op: 'quiesce', method: 'PUT', path: '/services/:domain/:service/quiesce' },
  { op: 'reload', method: 'POST', path: '/reload' },
] as const;

export type ControlRoute = (typeof CONTROL_ROUTES)[number];

/** The control routes' paths, as the router matches them (case-insensitive, with or without a trailing slash). */
const CONTROL_PATH = new RegExp(`^/api(?:${CONTROL_ROUTES.map((r) => r.path.replace(/:[a-z]+/g, '[^/]+')).join('|')})/?$`, 'i');

export function isControlPath(path: string): boolean {
  return CONTROL_PATH.test(path);
}

/** The listing of a service's handles (handleListing): the one route besides the control routes that follows their origin rule. */
const HANDLE_LISTING_PATH = /^\/api\/services\/[^/]+\/[^/]+\/handles\/?$/i;

/** Whether CORS for `path` follows the control routes' origin rule (`http.control.allowed_origins`) rather than `http.cors`. */
export function followsControlOrigins(path: string): boolean {
  return isControlPath(path) || HANDLE_LISTING_PATH.test(path);
}

/**
 * Whether a page of `origin` may send control requests to rt reached as
 * `host` (the request's Host): rt's own origin, or one listed in
 * `http.control.allowed_origins`. The scheme is not compared: behind a TLS
 * proxy, rt's own pages are https while rt is reached over http.
 */
export function controlOriginAllowed(origin: string, host: string | undefined, policy: ControlPolicy): boolean {
  return policy.origins.has('*') || policy.origins.has(normalOrigin(origin)) || sameHost(origin, host);
}

/** The refusal a control request gets (403 from a foreign origin, 401 without the token), or undefined when it may go ahead. */
export function controlRefusal(request: ControlCredentials, policy: ControlPolicy): ApiError | undefined {
  return originRefusal(request, policy, 'control operations are') ?? tokenRefusal(request, policy);
}

/**
 * Who may see a service's handle ids whole in its listing (docs/api.md
 * §5.1.2): a request carrying the control token, never one when none is
 * configured. A handle id is a capability: listed whole to anyone, any web
 * page an operator visits could read one and use it. So the listing follows
 * the control routes' origin rule (403 from a foreign page), a wrong token
 * answers 401, and everyone else sees the ids shortened.
 */
export function handleListing(request: ControlCredentials, policy: ControlPolicy): { refusal: ApiError } | { whole: boolean } {
  const refusal = originRefusal(request, policy, 'the listing of handles is') ?? (request.authorization === undefined ? undefined : tokenRefusal(request, policy));
  if (refusal) return { refusal };
  return { whole: policy.tokenDigest !== undefined && request.authorization !== undefined };
}

/** 403 for a request from a page of a foreign origin (`what` is refused from it). */
function originRefusal(request: ControlCredentials, policy: ControlPolicy, what: string): ApiError | undefined {
  const { origin, host, secFetchSite } = request;
  const allowed = origin !== undefined && controlOriginAllowed(origin, host, policy);
  if ((origin !== undefined || secFetchSite === 'cross-site') && !allowed) {
    const from = origin === undefined ? 'a cross-site page' : `origin ${origin}`;
    return new ApiError('RT_ERR_FORBIDDEN', `${what} refused from ${from}: it is not rt's own origin nor listed in http.control.allowed_origins`);
  }
  return undefined;
}

/** 401 without the control token, or with another, when one is set. */
function tokenRefusal(request: ControlCredentials, policy: ControlPolicy): ApiError | undefined {
  if (!policy.tokenDigest || bearerMatches(request.authorization, policy.tokenDigest)) return undefined;
  const details = request.authorization === undefined ? 'control operations need "Authorization: Bearer <token>" (http.control.token is set)' : 'the bearer token does not match http.control.token';
  return new ApiError('RT_ERR_UNAUTHORIZED', details, {}, { 'WWW-Authenticate': 'Bearer realm="rt"' });
}

/** What a request says about where it comes from and who sends it. */
export function credentialsOf(request: { header(name: string): string }): ControlCredentials {
  const header = (name: string) => request.header(name) || undefined;
  return { origin: header('origin'), host: header('host'), secFetchSite: header('sec-fetch-site'), authorization: header('authorization') };
}

function bearerMatches(authorization: string | undefined, digest: Buffer): boolean {
  // RFC 6750: the scheme is case-insensitive, the token is not (and is taken whole, should it hold a space).
  const token = /^Bearer +(.+?) *$/i.exec(authorization ?? '')?.[1];
  return token !== undefined && timingSafeEqual(sha256(token), digest);
}

function sameHost(origin: string, host: string | undefined): boolean {
  // Only a plain host[:port] can be rt's own: "evil.example@rt" would parse as rt.
  if (!host || /[/@?#\\]/.test(host)) return false;
  try {
    const url = new URL(origin);
    // The Host header parsed as the origin's scheme would parse it: the default port and case fall away on both sides.
    return url.host !== '' && new URL(`${url.protocol}//${host}`).host === url.host;
  } catch {
    return false;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
