// Where HTTP handler components are mounted outside `/api` (docs/api.md
// §5.8, sidecar `http_route`): which paths may be mounted, and which mount
// a request's path reaches (the longest route that is the path or a prefix
// of it at a segment boundary). Shared by the primary, which refuses a bad
// or doubly claimed route at load, and the workers, which route by it.

/** Where rt serves a handler below `/api` whatever its sidecar mounts: `/api/services/{domain}/{service}/http`. */
export function apiHandlerPath(id: { domain: string; service: string }): string {
  return `/api/services/${id.domain}/${id.service}/http`;
}

/** Every path an HTTP handler serves at: below its API path, and below its mount if its sidecar gives one. */
export function handlerRoutes(id: { domain: string; service: string }, route: string | null): string[] {
  return [apiHandlerPath(id), ...(route ? [route] : [])];
}

/** Paths rt answers itself, which no route may claim (itself or anything below it). */
export const RESERVED_PATHS: readonly { path: string; owner: string }[] = [
  { path: '/api', owner: "rt's API" },
  { path: '/console', owner: 'the console' },
];

/** One or more segments of URL path characters (RFC 3986 pchar), no `.` or `..` segment, no trailing slash. */
const SEGMENTS = /^(\/[A-Za-z0-9\-._~!$&'()*+,;=:@%]+)+$/;

export const MOUNT_PATH_SHAPE = 'a path such as "/hello" (absolute, no "." or ".." segments, no trailing slash)';

/** Whether `route` is a path a handler may be mounted at (whether it is free is another question: reservedBy). */
export function isMountPath(route: string): boolean {
  return SEGMENTS.test(route) && route.split('/').every((s) => s !== '.' && s !== '..');
}

/**
 * `path` as mounts are claimed and matched (docs/api.md §5.10): escapes of
 * unreserved characters decoded (`/%61pi` is `/api`), the others' hex in
 * upper case; `;` parameters dropped from every segment (`/api;x` is
 * `/api`); `.` and `..` segments resolved (`/hello/./echo` is
 * `/hello/echo`, and `..` never climbs above `/`). So a request reaches the
 * same service however its path is spelled, and no claim is `/api` in
 * disguise.
 */
export function normalPath(path: string): string {
  const out: string[] = [];
  const segments = path.split('/').slice(1);
  segments.forEach((raw, i) => {
    const segment = decodeUnreserved(raw.split(';')[0]);
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      // A trailing dot segment leaves the directory it names: `/a/.` is `/a/`.
      if (i === segments.length - 1) out.push('');
      return;
    }
    out.push(segment);
  });
  return `/${out.join('/')}`;
}

function decodeUnreserved(segment: string): string {
  return segment.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : escape.toUpperCase();
  });
}

/** Whether `path` is `route` or lies below it. */
export function isUnder(path: string, route: string): boolean {
  return path === route || (path.startsWith(route) && path[route.length] === '/');
}

/** What rt serves at `route` already (its API, the console), if anything, however the route spells it. */
export function reservedBy(route: string): { path: string; owner: string } | undefined {
  // Matched without case: a proxy or a client may not keep it, and /API beside /api would only confuse.
  const lower = normalPath(route).toLowerCase();
  return RESERVED_PATHS.find((r) => isUnder(lower, r.path));
}

/** The mount of `mounts` (normalised route → what is mounted) a request for `path` reaches: the longest route its normalised path is at or below. */
export function mountFor<T>(mounts: ReadonlyMap<string, T>, requestPath: string): { route: string; mounted: T } | undefined {
  const path = normalPath(requestPath);
  let best: { route: string; mounted: T } | undefined;
  for (const [route, mounted] of mounts) {
    if (isUnder(path, route) && (best === undefined || route.length > best.route.length)) best = { route, mounted };
  }
  return best;
}
