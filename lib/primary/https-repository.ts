// `https:` component repositories (docs/api.md §4): a URL ending in `.wasm` is one
// component; any other URL is a directory whose `index.json` lists them.
//
// Files are mirrored into `<cacheRoot>/<sha256 of the repository URL>/`, keeping
// their relative paths so that stems and sidecars (`<stem>.toml`) work exactly as
// in a `file:` repository. That folder holds only what the repository served,
// so that a sidecar naming a file in it names one of the repository's own
// (docs/api.md §8). `<sha256>.state.json` beside it remembers each file's ETag
// and hash (for conditional requests) and the last good component list, so
// that a repository that cannot be reached keeps serving what it served before,
// and the index of the last complete scan, for `repositories.watch` to ask
// whether anything changed since (`httpsRepositoryChanged`).
// The HTTPS client at the end is node:https on one keep-alive Agent per scan,
// not undici: measured as fast or faster, without a dependency (bench/https-client.ts,
// docs/performance.md, "The https: repository client").

import { chmod, readFile, rm, stat } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { join, relative } from 'node:path';
import { sha256 } from '../sha256.js';
import { check, list, misfitLine, record, string, table, type Static } from '../shape.js';
import { PRIVATE, writeAtomically } from '../write-atomically.js';
import { foundComponent, RepositoryError, scanError, type FoundComponent, type RepositoryScan } from './repository-scan.js';
import { CappedBytes } from '../capped-bytes.js';

export interface HttpsOptions {
  /** Extra CA (PEM file) trusted in addition to the system CAs. */
  caFile?: string;
  /** Longest time one file download may take, redirects and body included. */
  timeoutMs: number;
  /** Largest file accepted. */
  maxBytes: number;
  /** Each repository gets its own folder below this one. */
  cacheRoot: string;
}

/** What the mirror knows of its downloads (state.json). */
type State = Static<typeof STATE>;

/** One component to mirror: where it comes from and where it goes. */
interface Entry {
  url: string;
  segments: string[];
  sha256?: string;
}

/** How a scan fetches its files; exported, with `get`, for bench/https-client.ts. */
export interface Http {
  timeoutMs: number;
  maxBytes: number;
  /** The scan's own: its files share a connection, and it holds the TLS context. */
  agent: Agent;
}

interface Context {
  dir: string;
  state: State;
  http: Http;
  /** URLs still listed by the repository: cached files of any other URL are pruned. */
  listed: Set<string>;
}

type Fetched = { kind: 'fresh'; bytes: Buffer; sha256: string; etag?: string } | { kind: 'cached' } | { kind: 'missing' };

const MAX_REDIRECTS = 5;
const SHA256 = /^[0-9a-f]{64}$/i;
// Verification failures a `repositories.ca_file` can cure.
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

export async function fetchHttpsRepository(url: string, options: HttpsOptions): Promise<RepositoryScan> {
  const dir = join(options.cacheRoot, sha256(Buffer.from(url)));
  const state = await readState(statePath(dir));
  let http: Http;
  try {
    http = await httpOptions(url, options);
  } catch (e) {
    return lastGoodScan(url, dir, state, scanError(url, e));
  }
  try {
    return await mirrorListed(url, dir, state, http);
  } finally {
    // The scan's connections end with it.
    http.agent.destroy();
  }
}

/** Mirrors what the repository lists, or falls back on the last good scan when it lists nothing readable. */
async function mirrorListed(url: string, dir: string, state: State, http: Http): Promise<RepositoryScan> {
  let entries: Entry[];
  let index: IndexState | undefined;
  try {
    ({ entries, index } = await listing(url, http));
  } catch (e) {
    return lastGoodScan(url, dir, state, scanError(url, e));
  }
  const ctx: Context = { dir, state, http, listed: new Set() };
  const scan: RepositoryScan = { components: [], errors: [] };
  for (const entry of entries) {
    try {
      scan.components.push(await mirror(ctx, entry, url));
    } catch (e) {
      scan.errors.push(scanError(entry.url, e));
      // The previous version of this component, if it was good, keeps serving.
      const local = join(...entry.segments);
      if (state.good.includes(local)) scan.components.push(foundComponent(join(dir, local), url, dir));
    }
  }
  await prune(ctx);
  state.good = scan.components.map((c) => relative(dir, c.path));
  // Only a scan that got everything is what a watch compares with: one that failed somewhere is tried again at the next poll.
  if (index !== undefined && scan.errors.length === 0) state.index = index;
  else delete state.index;
  await writeState(statePath(dir), state);
  // Where earlier versions kept it: inside, a sidecar could have named it.
  await rm(join(dir, 'state.json'), { force: true });
  return scan;
}

/**
 * One keep-alive Agent per scan, and with a `ca_file` one TLS context built
 * once: given as `ca` on each request, the ~140 system CAs and the file's were
 * parsed again for every connection, over 20 ms of CPU each (docs/performance.md,
 * "The https: repository client"). Exported for bench/https-client.ts.
 */
export async function httpOptions(url: string, options: HttpsOptions): Promise<Http> {
  let secureContext: SecureContext | undefined;
  if (options.caFile !== undefined) {
    let pem: string;
    try {
      pem = await readFile(options.caFile, 'utf8');
    } catch (e) {
      throw new RepositoryError(url, `cannot read repositories.ca_file ${options.caFile}: ${(e as Error).message}`);
    }
    secureContext = createSecureContext({ ca: [...rootCertificates, pem] });
  }
  const agent = new Agent(secureContext === undefined ? { keepAlive: true } : { keepAlive: true, secureContext });
  return { timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, agent };
}

// ---- What the repository lists ----

/** What the repository lists; for a directory, with what a watch needs to ask whether its index changed. */
async function listing(url: string, http: Http): Promise<{ entries: Entry[]; index?: IndexState }> {
  const base = new URL(url);
  if (base.pathname.endsWith('.wasm')) {
    return { entries: [{ url, segments: [localSegment(url, base.pathname.split('/').pop() ?? '')] }] };
  }
  const indexUrl = indexUrlOf(base);
  const response = await get(indexUrl, http);
  if (response.status !== 200) throw new RepositoryError(indexUrl, `answered ${response.status}`);
  const entries = parseIndex(indexUrl, base, response.body.toString('utf8'));
  const unhashed = entries.filter((e) => e.sha256 === undefined).map((e) => e.url);
  return { entries, index: { etag: response.etag ?? '', sha256: sha256(response.body), unhashed } };
}

/** Where a directory repository's index is; `base` becomes the directory's URL (with its final `/`). */
function indexUrlOf(base: URL): string {
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL('index.json', base).href;
}

/** An index.json (docs/api.md §4); other fields are left for other tools. */
const INDEX = record(
  {
    components: list(
      record({ path: string({ expected: 'a path such as "name.wasm"' }), sha256: string({ test: (s) => SHA256.test(s), expected: '64 hex digits' }) }, 'an object with a "path"', ['path'], true),
      'an array of {"path": "name.wasm", "sha256": "..."} objects',
    ),
  },
  '{"components": [{"path": "name.wasm", "sha256": "..."}, ...]}',
  ['components'],
  true,
);

/** The mirror's own record of what it downloaded; anything else in the file is a damaged one. */
const STATE = record(
  {
    files: table(record({ path: string(), sha256: string(), etag: string({ empty: true }) }, 'a cached file', ['path', 'sha256']), 'files by URL'),
    good: list(string(), 'the local paths of the last good scan'),
    index: record(
      { etag: string({ empty: true }), sha256: string(), unhashed: list(string(), 'URLs') },
      'the index of the last complete scan: its ETag ("" for none), its hash, and the components it lists without a sha256',
      ['etag', 'sha256', 'unhashed'],
    ),
  },
  'the mirror state',
  ['files', 'good'],
);

type IndexState = NonNullable<State['index']>;

function parseIndex(indexUrl: string, base: URL, text: string): Entry[] {
  const fail = (what: string) => new RepositoryError(indexUrl, what);
  let index: unknown;
  try {
    index = JSON.parse(text);
  } catch (e) {
    throw fail(`not JSON: ${(e as Error).message}`);
  }
  const checked = check(INDEX, index, 'data');
  if (!checked.ok) throw fail(misfitLine(checked, { show: (got) => JSON.stringify(got) ?? 'nothing' }));
  const entries: Entry[] = [];
  const urls = new Set<string>();
  checked.value.components.forEach(({ path, sha256: hash }, i) => {
    const where = `components[${i}]`;
    const segments = relativeSegments(indexUrl, `${where} "${path}"`, path);
    const entry: Entry = { url: new URL(path, base).href, segments };
    if (hash !== undefined) entry.sha256 = hash.toLowerCase();
    if (urls.has(entry.url)) throw fail(`${where} "${path}": listed twice`);
    urls.add(entry.url);
    entries.push(entry);
  });
  return entries;
}

/** An index path must stay inside the repository: it becomes a path in the cache folder. */
function relativeSegments(indexUrl: string, where: string, path: string): string[] {
  const fail = (what: string) => new RepositoryError(indexUrl, `${where}: ${what}`);
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/') || path.startsWith('\\')) {
    throw fail('must be a path relative to the repository, not an absolute URL or path');
  }
  if (/[?#]/.test(path)) throw fail('must be a plain path, without "?" or "#"');
  if (!path.endsWith('.wasm')) throw fail('is not a .wasm file');
  return path.split('/').map((segment) => localSegment(indexUrl, segment, where));
}

function localSegment(url: string, segment: string, where = 'the file name'): string {
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    throw new RepositoryError(url, `${where}: invalid percent-encoding in "${segment}"`);
  }
  if (name === '..') throw new RepositoryError(url, `${where}: ".." segments are not allowed`);
  if (name === '' || name === '.' || /[/\\\0]/.test(name)) throw new RepositoryError(url, `${where}: invalid path segment "${segment}"`);
  return name;
}

// ---- Mirroring ----

async function mirror(ctx: Context, entry: Entry, repository: string): Promise<FoundComponent> {
  const local = join(ctx.dir, ...entry.segments);
  const sidecarUrl = new URL(entry.url);
  sidecarUrl.pathname = sidecarUrl.pathname.replace(/\.wasm$/, '.toml');
  const sidecar = { url: sidecarUrl.href, local: local.replace(/\.wasm$/, '.toml') };
  ctx.listed.add(entry.url).add(sidecar.url);
  // Both are fetched before either is stored, so a failure leaves the previous pair intact.
  const wasm = await fetchFile(ctx, entry.url, local, entry.sha256);
  if (wasm.kind === 'missing') throw new RepositoryError(entry.url, 'answered 404');
  const toml = await fetchFile(ctx, sidecar.url, sidecar.local);
  await store(ctx, entry.url, local, wasm);
  await store(ctx, sidecar.url, sidecar.local, toml);
  return foundComponent(local, repository, ctx.dir);
}

/** The file's bytes, or `cached` when the copy on disk is current, or `missing` on 404. */
async function fetchFile(ctx: Context, url: string, local: string, expected?: string): Promise<Fetched> {
  const cached = ctx.state.files[url];
  const valid = cached !== undefined && (await fileSha256(local)) === cached.sha256;
  if (valid && expected === cached.sha256) return { kind: 'cached' };
  // A known hash that differs from the copy makes the copy stale whatever its ETag says.
  const etag = valid && expected === undefined ? cached.etag : undefined;
  const response = await get(url, ctx.http, etag);
  if (response.status === 304 && etag !== undefined) return { kind: 'cached' };
  if (response.status === 404) return { kind: 'missing' };
  if (response.status !== 200) throw new RepositoryError(url, `answered ${response.status}`);
  const actual = sha256(response.body);
  if (expected !== undefined && actual !== expected) {
    throw new RepositoryError(url, `sha256 mismatch: index.json lists ${expected}, the download has ${actual}`);
  }
  return { kind: 'fresh', bytes: response.body, sha256: actual, etag: response.etag };
}

async function store(ctx: Context, url: string, local: string, fetched: Fetched): Promise<void> {
  // A sidecar's configuration may hold secrets: the mirror is rt's user's alone, files an older rt kept too.
  if (fetched.kind === 'cached') return chmod(local, PRIVATE);
  if (fetched.kind === 'missing') {
    await rm(local, { force: true });
    delete ctx.state.files[url];
    return;
  }
  await writeAtomically(local, fetched.bytes, PRIVATE);
  ctx.state.files[url] = { path: relative(ctx.dir, local), sha256: fetched.sha256, etag: fetched.etag };
}

/** Files of URLs the index no longer lists. */
async function prune(ctx: Context): Promise<void> {
  for (const [url, file] of Object.entries(ctx.state.files)) {
    if (ctx.listed.has(url)) continue;
    await rm(join(ctx.dir, file.path), { force: true });
    delete ctx.state.files[url];
  }
}

async function lastGoodScan(url: string, dir: string, state: State, error: string): Promise<RepositoryScan> {
  const components: FoundComponent[] = [];
  for (const path of state.good) {
    const local = join(dir, path);
    if (await exists(local)) components.push(foundComponent(local, url, dir));
  }
  const note = components.length ? ` (serving the ${components.length} component(s) of the last good scan)` : '';
  return { components, errors: [error + note], unreadable: true };
}

// ---- Watching (docs/api.md §5.4) ----

/**
 * Whether the repository has changed since its last complete scan, for
 * `repositories.watch`: one conditional request for its index (for a `.wasm`
 * URL, the file), plus one per component the index lists without a sha256,
 * whose file may change behind an unchanged index. Throws what the exchange
 * failed with (a RepositoryError).
 */
export async function httpsRepositoryChanged(url: string, options: HttpsOptions): Promise<boolean> {
  const dir = join(options.cacheRoot, sha256(Buffer.from(url)));
  const state = await readState(statePath(dir));
  const base = new URL(url);
  const http = await httpOptions(url, options);
  try {
    if (base.pathname.endsWith('.wasm')) return await fileChanged(url, state, http);
    const { index } = state;
    if (index === undefined) return true;
    const indexUrl = indexUrlOf(base);
    const response = await get(indexUrl, http, index.etag === '' ? undefined : index.etag);
    if (response.status !== 304) {
      if (response.status !== 200) throw new RepositoryError(indexUrl, `answered ${response.status}`);
      // A server without ETags sends the index every time: its hash tells.
      if (sha256(response.body) !== index.sha256) return true;
    }
    for (const component of index.unhashed) if (await fileChanged(component, state, http)) return true;
    return false;
  } finally {
    http.agent.destroy();
  }
}

/** One conditional request for a file the mirror holds: changed unless it answers 304 or the same bytes. */
async function fileChanged(url: string, state: State, http: Http): Promise<boolean> {
  const cached = state.files[url];
  if (cached === undefined) return true;
  const response = await get(url, http, cached.etag === undefined || cached.etag === '' ? undefined : cached.etag);
  if (response.status === 304) return false;
  // Gone is a change, for the reload to report; anything else may pass, and is asked again at the next poll.
  if (response.status === 404) return true;
  if (response.status !== 200) throw new RepositoryError(url, `answered ${response.status}`);
  return sha256(response.body) !== cached.sha256;
}

// ---- The mirror's state ----

/** Beside the mirror folder, not in it: the folder holds only what the repository served. */
function statePath(dir: string): string {
  return `${dir}.state.json`;
}

async function readState(path: string): Promise<State> {
  try {
    const checked = check(STATE, JSON.parse(await readFile(path, 'utf8')), 'data');
    if (checked.ok) return checked.value;
  } catch {
    // Missing or damaged: start afresh, as on a first scan.
  }
  return { files: {}, good: [] };
}

async function writeState(path: string, state: State): Promise<void> {
  await writeAtomically(path, Buffer.from(JSON.stringify(state, null, 2)));
}

// ---- HTTP ----

export interface Response {
  status: number;
  body: Buffer;
  etag?: string;
}

/** GET with redirects, the size cap and one deadline for the whole exchange. */
export async function get(url: string, http: Http, etag?: string): Promise<Response> {
  const signal = AbortSignal.timeout(http.timeoutMs);
  let current = new URL(url);
  try {
    for (let redirects = 0; ; redirects++) {
      const res = await send(current, http, signal, etag);
      const status = res.statusCode ?? 0;
      if (status < 300 || status >= 400 || status === 304) {
        const body = status >= 200 && status < 300 ? await readBody(res, url, http.maxBytes) : discard(res);
        const tag = res.headers.etag;
        return tag === undefined ? { status, body } : { status, body, etag: tag };
      }
      res.resume();
      current = redirectTarget(url, current, status, res.headers.location, redirects);
    }
  } catch (e) {
    throw exchangeError(url, e, signal, http.timeoutMs);
  }
}

/** Where a redirect of `url` (now at `current`) leads: at most MAX_REDIRECTS of them, and only to https:. */
export function redirectTarget(url: string, current: URL, status: number, location: string | undefined, redirects: number): URL {
  if (location === undefined) throw new RepositoryError(url, `answered ${status} without a Location`);
  if (redirects === MAX_REDIRECTS) throw new RepositoryError(url, `more than ${MAX_REDIRECTS} redirects`);
  const next = new URL(location, current);
  if (next.protocol !== 'https:') throw new RepositoryError(url, `redirected to ${next.href}, which is not https:`);
  return next;
}

/** What failed in an exchange with `url`, as the scan reports it: its own verdicts as they are, the deadline, or the network's error. */
export function exchangeError(url: string, e: unknown, signal: AbortSignal, timeoutMs: number): RepositoryError {
  if (e instanceof RepositoryError) return e;
  if (signal.aborted) return new RepositoryError(url, `no complete answer within ${timeoutMs} ms`);
  return new RepositoryError(url, describeNetworkError(e));
}

function send(url: URL, http: Http, signal: AbortSignal, etag?: string): Promise<IncomingMessage> {
  const options = { signal, agent: http.agent, headers: etag === undefined ? {} : { 'if-none-match': etag } };
  return new Promise((resolve, reject) => request(url, options, resolve).on('error', reject).end());
}

async function readBody(res: IncomingMessage, url: string, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => {
    res.destroy();
    return new RepositoryError(url, `larger than repositories.max_download_bytes (${maxBytes} bytes)`);
  };
  const body = new CappedBytes(maxBytes);
  const declared = res.headers['content-length'];
  if (body.refuses(declared === undefined ? undefined : Number(declared))) throw tooLarge();
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (!body.add(chunk)) throw tooLarge();
  }
  return body.bytes();
}

function discard(res: IncomingMessage): Buffer {
  res.resume();
  return Buffer.alloc(0);
}

export function describeNetworkError(e: unknown): string {
  const { code, message } = e as { code?: string; message?: string };
  const text = message ?? String(e);
  if (code !== undefined && UNTRUSTED.has(code)) {
    return `certificate not trusted (${text}): set repositories.ca_file to trust its CA`;
  }
  return text;
}

// ---- Small helpers ----

async function fileSha256(path: string): Promise<string | undefined> {
  try {
    return sha256(await readFile(path));
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

