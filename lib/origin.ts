// Browser origins as configuration names them (`http.cors.allowed_origins`,
// `http.control.allowed_origins`) and as requests carry them (`Origin`).

/** `*`, or an http(s) URL that is an origin and nothing more: no user, path, query or fragment. */
export function isOrigin(value: string): boolean {
  if (value === '*') return true;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '' && !/[?#]/.test(value);
  } catch {
    return false;
  }
}

/** `https://Admin.example:443/` and `https://admin.example` are one origin; `null` and `*` stay as they are. */
export function normalOrigin(origin: string): string {
  try {
    const url = new URL(origin);
    return url.origin === 'null' ? origin : url.origin;
  } catch {
    return origin;
  }
}
