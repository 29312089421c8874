// The fetch-handler example: an HTTP handler as most JavaScript for the web is
// written (service workers, Cloudflare Workers, Deno Deploy): a `fetch` event
// listener answering a Request with a Response. componentize-js (its
// `fetch-event` feature) builds it into a component exporting
// wasi:http/incoming-handler; rt serves it at
// /api/services/example/fetch-handler/http/...
//
//   GET  /       the routes
//   GET  /time   the time, from the guest's clock
//   POST /sum    the sum of a JSON array of numbers: [1, 2, 3.5] → {"sum":6.5}
//
// Every request gets a fresh instance: keep nothing between requests in
// globals (it would be gone), and expect no two requests at once here.

const ROUTES = ['GET /', 'GET /time', 'POST /sum'];

addEventListener('fetch', (event) => event.respondWith(handle(event.request)));

function json(value, status = 200, headers = {}) {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json', ...headers } });
}

async function handle(request) {
  const { pathname } = new URL(request.url);
  const route = `${request.method} ${pathname}`;
  if (route === 'GET /') return json({ routes: ROUTES });
  if (route === 'GET /time') {
    const now = new Date();
    return json({ iso: now.toISOString(), epoch_ms: now.getTime() });
  }
  if (route === 'POST /sum') {
    let numbers;
    try {
      numbers = await request.json();
    } catch {
      return json({ error: 'the body is not JSON' }, 400);
    }
    if (!Array.isArray(numbers) || !numbers.every((n) => typeof n === 'number')) return json({ error: 'expected a JSON array of numbers' }, 400);
    return json({ sum: numbers.reduce((a, b) => a + b, 0) });
  }
  // A known path asked with another method: 405 naming the ones it takes.
  const allowed = ROUTES.filter((r) => r.endsWith(` ${pathname}`)).map((r) => r.split(' ')[0]);
  if (allowed.length > 0) return json({ error: `${request.method} is not allowed here` }, 405, { allow: allowed.join(', ') });
  return json({ error: 'not found', path: pathname }, 404);
}
