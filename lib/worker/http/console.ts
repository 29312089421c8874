// The web console (README "Console"): a page for people who would rather look
// than read. Its files are built at install time (console/build.mjs bundles
// console/src into dist/console) and read once here, at start-up: a request
// only ever picks one of those files by its exact name, so no path from a
// request reaches the filesystem. The page drives rt through the same /api
// endpoints as any client.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';
import { ApiError } from '../../errors.js';

/** Where the build writes the console (dist/lib/worker/http/console.js → dist/console). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));

export const CONSOLE_PATH = '/console/';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The build names bundles by their content (`console-<HASH>.js`): those never change; the others are revalidated. */
const CONTENT_HASHED = /-[A-Z0-9]{8}\.(js|css)$/;

/**
 * Self only: the page's script and styles come from rt, it talks to rt only,
 * and images are the blob: URLs it makes of binary answers. No framing, so
 * no other site can lay its buttons (restart, quiesce, reload) under a
 * visitor's clicks.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

interface ConsoleFile {
  body: Buffer;
  /** The same bytes gzipped by the build, when it wrote them. */
  gzip?: Buffer;
  type: string;
  etag: string;
  /** The page is revalidated; the bundles it names carry a content hash and never change. */
  cacheControl: string;
}

/** The console's files by the name they are served under (`index.html` for the page). */
export function readConsoleFiles(dir = CONSOLE_DIR): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  if (!existsSync(dir)) return files;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const type = CONTENT_TYPES[extname(entry.name)];
    if (!entry.isFile() || !type) continue;
    const body = readFileSync(join(dir, entry.name));
    const gzipPath = join(dir, `${entry.name}.gz`);
    files.set(entry.name, {
      body,
      ...(existsSync(gzipPath) ? { gzip: readFileSync(gzipPath) } : {}),
      type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      cacheControl: CONTENT_HASHED.test(entry.name) ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
  }
  return files;
}

/**
 * Serves the console under /console/ and redirects / there. Requests for
 * other paths pass through untouched; a name that is not one of the files
 * falls through to the app's 404.
 */
export function consoleFiles(files: Map<string, ConsoleFile>) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const { path } = ctx;
    if (path !== '/' && path !== '/console' && !path.startsWith(CONSOLE_PATH)) return next() as Promise<void>;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new ApiError('RT_ERR_METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${path} (allowed: GET, HEAD)`);
    }
    if (path === '/' || path === '/console') {
      ctx.redirect(CONSOLE_PATH);
      return;
    }
    const name = path === CONSOLE_PATH ? 'index.html' : path.slice(CONSOLE_PATH.length);
    const file = files.get(name);
    if (!file) {
      if (name === 'index.html') throw new ApiError('RT_ERR_NOT_FOUND', 'the console is not built (no dist/console/index.html): run `npm run build`');
      return next() as Promise<void>;
    }
    ctx.set(SECURITY_HEADERS);
    ctx.set({ 'Cache-Control': file.cacheControl, ETag: file.etag });
    ctx.vary('Accept-Encoding');
    ctx.type = file.type;
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    if (file.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = file.gzip;
    } else {
      ctx.body = file.body;
    }
  };
}
