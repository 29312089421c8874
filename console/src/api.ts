// What the console reads from rt's /api (docs/api.md §5), and the control
// requests it sends. Control operations carry `Authorization: Bearer <token>`
// when the user gave a token (rt asks for one when `http.control.token` is
// set, docs/api.md §5.6); the page is served by rt itself, so its requests are
// same-origin and pass the cross-site check.

export interface MethodSummary {
  name: string;
  signature: string;
  invocable: boolean;
  reason?: string;
  streaming?: boolean;
  media_types?: string[];
}

/** A resource's constructor or method (docs/api.md §5.1.2): its signature as WIT writes it in the resource (a method's without `self`). */
export interface MemberSummary {
  signature: string;
  invocable: boolean;
  reason?: string;
}

export interface ResourceSummary {
  name: string;
  aliases: string[];
  interface: string | null;
  constructor: MemberSummary | null;
  methods: (MemberSummary & { name: string })[];
  /** Its static functions, by their names among the service's methods. */
  statics: string[];
}

export interface MemberDescription extends MemberSummary {
  request_schema?: Record<string, unknown>;
}

export interface ResourceDescription extends ResourceSummary {
  constructor: MemberDescription | null;
  methods: (MemberDescription & { name: string })[];
}

/** A live handle, as GET .../handles lists it: its id shortened ("1.cJC7wt…") unless the request carried the control token. */
export interface HandleEntry {
  handle: string;
  resource: string;
  /** Its handle scope, shortened (`default` for the default one). */
  scope: string;
  worker: number | string;
  created: string;
  last_used: string;
  expires: string;
}

export interface ServiceSummary {
  domain: string;
  service: string;
  version: string | null;
  source: string;
  state: 'active' | 'quiesced';
  /** `http`: an HTTP handler, served at `routes` (docs/api.md §5.8). */
  kind: 'http' | 'methods';
  routes?: string[];
  /** The handler interface it exports, e.g. `wasi:http/incoming-handler@0.2.3`. */
  handler?: string;
  config: { origin: string; content_type: string; bytes: number } | null;
  methods: MethodSummary[];
  resources: ResourceSummary[];
  unsatisfied_imports: string[];
  instances: {
    pool_size: number;
    max_instances: number;
    max_concurrency: number;
    max_invocations: number | null;
    live: number;
    waiting: number;
    placement: string | null;
    max_queue: number;
    handles: number;
    max_handles: number;
    handle_idle_seconds: number;
  };
}

export interface MethodDescription extends MethodSummary {
  aliases: string[];
  interface: string | null;
  request_schema?: Record<string, unknown>;
  /** A method that reads a stream<T> parameter from the request body (docs/api.md §5.9): its bytes, or NDJSON items of `item_schema`; its other parameters go in the query string. */
  request_body?: { parameter: string; media_type: string; item_schema?: Record<string, unknown> };
}

export interface ServiceDescription extends ServiceSummary {
  wit: string;
  methods: MethodDescription[];
  resources: ResourceDescription[];
}

export interface Listing {
  services: ServiceSummary[];
  failed: { source: string; error: string }[];
}

export const serviceName = (s: { domain: string; service: string }): string => `${s.domain}.${s.service}`;
export const servicePath = (s: { domain: string; service: string }): string => `/api/services/${encodeURIComponent(s.domain)}/${encodeURIComponent(s.service)}`;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(describeError(status, body));
  }
}

/** "404 unknown service: ..." from the error body (docs/api.md §5.5). */
export function describeError(status: number, body: unknown): string {
  const e = body as { error?: unknown; details?: unknown } | null;
  if (typeof e?.error !== 'string') return `HTTP ${status}`;
  return `${status} ${e.error}${typeof e.details === 'string' && e.details ? `: ${e.details}` : ''}`;
}

/** GETs `path`'s JSON; with `withToken`, carrying the control token the user entered (the listing of handles shows whole ids only to it). */
export async function getJson<T>(path: string, { withToken = false } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = withToken ? controlToken.get() : '';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, { headers });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new HttpError(res.status, body);
  return body as T;
}

const TOKEN_KEY = 'rt-console-control-token';

/** The control token the user entered, kept for this browser tab only. */
export const controlToken = {
  get: (): string => sessionStorage.getItem(TOKEN_KEY) ?? '',
  set: (token: string): void => (token ? sessionStorage.setItem(TOKEN_KEY, token) : sessionStorage.removeItem(TOKEN_KEY)),
};

export interface ControlAnswer {
  status: number;
  body: unknown;
}

/** Restart, quiesce or reload, through the same endpoints as any client. */
export async function control(method: 'POST' | 'PUT', path: string, config?: { body: string; contentType: string }): Promise<ControlAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = controlToken.get();
  if (token) headers.authorization = `Bearer ${token}`;
  if (config) headers['content-type'] = config.contentType;
  const res = await fetch(path, { method, headers, ...(config ? { body: config.body } : {}) });
  return { status: res.status, body: await res.json().catch(() => null) };
}
