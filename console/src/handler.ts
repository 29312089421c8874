// An HTTP handler's panel (docs/api.md §5.8): its routes, each a link, and a
// box that sends it a request (method, path below the route, headers, body)
// and shows the answer as it streams in. The answer is the component's: it
// is read as data here, never rendered as a page in the console's origin.

import { answerView } from './answer.js';
import type { ServiceDescription } from './api.js';
import { h } from './dom.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

export function handlerView(d: ServiceDescription): HTMLElement {
  const routes = d.routes ?? [];
  const route = h('select', { class: 'handler-route', 'aria-label': 'route' }, ...routes.map((r) => h('option', { value: r }, r)));
  const method = h('select', { class: 'handler-method', 'aria-label': 'method' }, ...METHODS.map((m) => h('option', { value: m }, m)));
  const path = h('input', { class: 'handler-path', value: '/', 'aria-label': 'path below the route, with its query' });
  const headers = h('textarea', { class: 'handler-headers', rows: '2', placeholder: 'headers, one per line: name: value' });
  const body = h('textarea', { class: 'handler-body', rows: '3', placeholder: 'body (not sent with GET or HEAD)' });
  const send = h('button', { type: 'button', class: 'handler-send' }, 'Send');
  const answer = answerView();
  send.addEventListener('click', () => {
    void (async () => {
      send.disabled = true;
      const started = performance.now();
      try {
        const withBody = method.value !== 'GET' && method.value !== 'HEAD';
        const res = await fetch(`${route.value}${path.value.startsWith('/') || path.value === '' ? '' : '/'}${path.value}`, {
          method: method.value,
          headers: parseHeaders(headers.value),
          ...(withBody ? { body: body.value } : {}),
        });
        await answer.show(res, started, true);
      } catch (e) {
        answer.error(`The request failed: ${(e as Error).message}`);
      } finally {
        send.disabled = false;
      }
    })();
  });
  return h(
    'div',
    { class: 'handler' },
    h('div', { class: 'handler-routes' }, `${d.handler ?? 'wasi:http/incoming-handler'} at `, ...routes.flatMap((r, i) => [i > 0 ? ', ' : '', h('a', { href: `${r}/`, target: '_blank', rel: 'noopener' }, r)])),
    h('div', { class: 'handler-request' }, method, route, path, send),
    headers,
    body,
    answer.element,
  );
}

/** `name: value` lines as headers; lines without a colon are left out. */
function parseHeaders(text: string): [string, string][] {
  return text
    .split('\n')
    .map((line) => line.split(/:(.*)/s, 2))
    .filter((parts): parts is [string, string] => parts.length === 2 && parts[0].trim() !== '')
    .map(([name, value]) => [name.trim(), value.trim()]);
}
