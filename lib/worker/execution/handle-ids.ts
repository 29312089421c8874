// Handle ids (docs/api.md §5.1.2): `<worker>.<random>.<tag>`. The worker id
// says where the handle lives, so a request that reaches another worker is
// forwarded there (http/peers.ts). 128 random bits make it
// unguessable: a handle is a capability. The tag, an HMAC of the rest and of
// the service's name with a key the primary makes for each run of rt, lets
// any worker tell an id rt issued for this service (and has since ended:
// 410) from one it never issued for it (404) without asking anyone, even
// when the worker that issued it is gone.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What issues a worker's handles. */
export interface WorkerIssuer {
  workerId: number;
  /** The run's key (shared by every worker and instance thread). */
  key: Uint8Array;
}

/** What issues one service's handles in a worker. */
export interface HandleIssuer extends WorkerIssuer {
  /** The service's name (`domain.service`): its versions share it, so a handle of a replaced version answers 410, not 404. */
  scope: string;
}

const RANDOM_BYTES = 16;
const TAG_BYTES = 8;
const ID = /^(\d{1,9})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{11})$/;

function tag(issuer: Omit<HandleIssuer, 'workerId'>, body: string): Buffer {
  return createHmac('sha256', issuer.key).update(`${issuer.scope}\n${body}`).digest().subarray(0, TAG_BYTES);
}

/** A new id for a handle of service `issuer.scope` living in worker `issuer.workerId`. */
export function mintHandleId(issuer: HandleIssuer): string {
  const body = `${issuer.workerId}.${randomBytes(RANDOM_BYTES).toString('base64url')}`;
  return `${body}.${tag(issuer, body).toString('base64url')}`;
}

/** The worker that issued `id`, if rt issued it in this run for service `scope`; undefined for any other string. */
export function handleOwner(id: string, issuer: Omit<HandleIssuer, 'workerId'>): number | undefined {
  const m = ID.exec(id);
  if (!m) return undefined;
  const given = Buffer.from(m[3], 'base64url');
  if (given.length !== TAG_BYTES || !timingSafeEqual(given, tag(issuer, `${m[1]}.${m[2]}`))) return undefined;
  return Number(m[1]);
}

/** `id` as logs may show it: enough to tell handles apart, not enough to use one. */
export function redactHandleId(id: string): string {
  const dot = id.indexOf('.');
  return dot === -1 ? '…' : `${id.slice(0, dot + 7)}…`;
}

/** A handle scope (docs/api.md §5.1.2) as answers and listings show it: a client's secret, never shown whole. */
export function redactScope(scope: string): string {
  return scope === '' ? 'default' : `${scope.slice(0, 6)}…`;
}

const IN_PATH = /(\/handles\/)([^/?#]+)/g;

/** `url` as a log line may show it: a handle id in its path (`.../handles/<id>`) redacted. */
export function redactHandleIds(url: string): string {
  return url.includes('/handles/') ? url.replace(IN_PATH, (_, prefix: string, id: string) => prefix + redactHandleId(id)) : url;
}

/** A fresh key, for a run of rt (the primary's) or a test's. */
export function handleKey(): Uint8Array {
  return randomBytes(32);
}
