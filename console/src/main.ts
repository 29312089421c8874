// The console page: rt's services with their state, versions, instances and
// load errors; per method its WIT signature and a form to invoke it; their
// resources and handles (resources.ts); restart, quiesce and reload; request
// rate and latency from /api/metrics, and plots of their last minutes from
// /api/metrics/history (plots.ts).

import { answerView } from './answer.js';
import {
  control,
  controlToken,
  describeError,
  getJson,
  serviceName,
  servicePath,
  type Listing,
  type MethodDescription,
  type ServiceDescription,
  type ServiceSummary,
} from './api.js';
import { fill, h } from './dom.js';
import { requestEditor } from './form.js';
import { handlerView } from './handler.js';
import { resourcesView } from './resources.js';
import { parsePrometheus, serviceRates, servicePoll, type Poll, type ServiceRates } from './prometheus.js';
import { PlotsView } from './plots.js';
import type { MetricsHistory } from '../../lib/metrics-history.js';

const LISTING_EVERY_MS = 5_000;
const METRICS_EVERY_MS = 2_000;
/** As often as rt samples the history (docs/api.md §7). */
const HISTORY_EVERY_MS = 5_000;
const CONFIG_TYPES = ['application/json', 'application/toml', 'text/plain', 'application/yaml', 'application/octet-stream'];

const views = new Map<string, ServiceView>();
const servicesList = h('div', { class: 'services' });
const failedList = h('div', { class: 'failed' });
const notice = h('div', { class: 'notice', role: 'status' });
const plots = new PlotsView();
const tokenInput = h('input', { type: 'password', id: 'control-token', autocomplete: 'off', placeholder: 'only if http.control.token is set' });

function main(): void {
  tokenInput.value = controlToken.get();
  tokenInput.addEventListener('change', () => controlToken.set(tokenInput.value.trim()));
  const reloadButton = h('button', { type: 'button', class: 'reload' }, 'Reload components');
  const reloadAnswer = h('pre', { class: 'control-answer reload-answer' });
  reloadButton.addEventListener('click', () => {
    void runControl(reloadButton, reloadAnswer, 'POST', '/api/reload').then((body) => {
      // A reload may have replaced services: their descriptions are fetched again when next shown.
      const changed = body as { updated?: string[] } | undefined;
      for (const name of changed?.updated ?? []) views.get(name)?.forget();
    });
  });
  const app = document.getElementById('app')!;
  fill(
    app,
    h(
      'header',
      {},
      h('h1', {}, 'rt console'),
      h('div', { class: 'header-controls' }, h('label', { for: 'control-token' }, 'Control token '), tokenInput, reloadButton),
    ),
    notice,
    reloadAnswer,
    plots.element,
    failedList,
    servicesList,
  );
  void refreshListing();
  setInterval(() => void refreshListing(), LISTING_EVERY_MS);
  void refreshMetrics();
  setInterval(() => void refreshMetrics(), METRICS_EVERY_MS);
  void refreshHistory();
  setInterval(() => void refreshHistory(), HISTORY_EVERY_MS);
}

async function refreshListing(): Promise<void> {
  let listing: Listing;
  try {
    listing = await getJson<Listing>('/api/services');
  } catch (e) {
    fill(notice, `Cannot list the services: ${(e as Error).message}`);
    return;
  }
  fill(notice);
  plots.setServices(listing.services.map(serviceName));
  const seen = new Set<string>();
  for (const summary of listing.services) {
    const name = serviceName(summary);
    seen.add(name);
    let view = views.get(name);
    if (!view) {
      views.set(name, (view = new ServiceView(summary)));
      servicesList.append(view.element);
    }
    view.update(summary);
  }
  for (const [name, view] of views) {
    if (seen.has(name)) continue;
    view.element.remove();
    views.delete(name);
  }
  // By name, whatever order the workers list them in; moved only when that changed (moving keeps open panels as they are).
  const sorted = [...views.keys()].sort().map((name) => views.get(name)!.element);
  if (sorted.some((element, i) => servicesList.children[i] !== element)) servicesList.append(...sorted);
  if (listing.services.length === 0) fill(notice, 'No services: add components to a repository (repo_urls) and reload.');
  fill(
    failedList,
    listing.failed.length > 0 && h('h2', {}, 'Not loaded'),
    listing.failed.length > 0 && h('ul', {}, ...listing.failed.map((f) => h('li', {}, h('code', {}, f.source), ': ', f.error))),
  );
}

let lastPoll: Poll | undefined;
async function refreshMetrics(): Promise<void> {
  try {
    const res = await fetch('/api/metrics');
    if (!res.ok) return;
    const poll = servicePoll(parsePrometheus(await res.text()), performance.now());
    const rates = serviceRates(lastPoll, poll);
    lastPoll = poll;
    for (const [name, view] of views) view.showRates(rates.get(name));
  } catch {
    // rt restarting: the next poll tries again
  }
}

async function refreshHistory(): Promise<void> {
  try {
    plots.show(await getJson<MetricsHistory>('/api/metrics/history'));
  } catch {
    // rt restarting: the next poll tries again
  }
}

/** Runs a control operation, showing its answer; asks for the token on 401. Resolves with the answer's body when it succeeded. */
async function runControl(button: HTMLButtonElement, output: HTMLElement, method: 'POST' | 'PUT', path: string, config?: { body: string; contentType: string }): Promise<unknown> {
  button.disabled = true;
  output.classList.remove('failed');
  fill(output, `${button.textContent}…`);
  try {
    const { status, body } = await control(method, path, config);
    const ok = status >= 200 && status < 300;
    output.classList.toggle('failed', !ok);
    if (status === 401) {
      fill(output, `${describeError(status, body)}. Enter the control token (http.control.token) at the top of the page and try again.`);
      tokenInput.focus();
    } else {
      fill(output, ok ? JSON.stringify(body) : `${describeError(status, body)}\n${JSON.stringify(body, null, 2)}`);
    }
    void refreshListing();
    return ok ? body : undefined;
  } catch (e) {
    output.classList.add('failed');
    fill(output, `${button.textContent} failed: ${(e as Error).message}`);
    return undefined;
  } finally {
    button.disabled = false;
  }
}

class ServiceView {
  readonly element: HTMLElement;
  readonly #title = h('span', { class: 'service-name' });
  readonly #facts = h('span', { class: 'service-facts' });
  readonly #rates = h('span', { class: 'service-rates' }, '–');
  readonly #details = h('div', { class: 'service-details' });
  readonly #body = h('div', { class: 'service-body' });
  #summary: ServiceSummary;
  #description: Promise<void> | undefined;

  constructor(summary: ServiceSummary) {
    this.#summary = summary;
    const details = h('details', {}, h('summary', {}, this.#title, this.#facts, this.#rates), this.#details, this.#controls(), this.#body);
    details.addEventListener('toggle', () => {
      if (details.open) void this.#describe();
    });
    this.element = h('section', { class: 'service', 'data-service': `${summary.domain}/${summary.service}` }, details);
  }

  update(summary: ServiceSummary): void {
    const changed = summary.source !== this.#summary.source || summary.version !== this.#summary.version;
    this.#summary = summary;
    if (changed) this.forget();
    const { instances } = summary;
    fill(this.#title, `${summary.domain}/${summary.service}`, summary.version ? h('span', { class: 'version' }, `@${summary.version}`) : null);
    fill(
      this.#facts,
      h('span', { class: `state state-${summary.state}` }, summary.state),
      ` ${instances.live} instance(s)${instances.placement ? `, ${instances.placement}` : ''}`,
    );
    fill(
      this.#details,
      h('div', {}, 'source: ', h('code', {}, summary.source)),
      summary.kind === 'http' && h('div', { class: 'handler-facts' }, 'HTTP handler at ', h('code', {}, (summary.routes ?? []).join(', '))),
      h('div', {}, 'configuration: ', summary.config ? h('code', {}, `${summary.config.origin} (${summary.config.content_type}, ${summary.config.bytes} bytes)`) : 'none'),
      h('div', {}, `instances: pool ${instances.pool_size} (≤ ${instances.max_instances}, ${instances.max_concurrency} async calls each), live ${instances.live} and ${instances.waiting} calls waiting (in the worker that answered), queue ≤ ${instances.max_queue}${instances.max_invocations ? `, replaced after ${instances.max_invocations} calls` : ''}`),
      summary.resources.length > 0 &&
        h(
          'div',
          { class: 'handle-facts' },
          `resources: ${summary.resources.map((r) => r.name).join(', ')}; handles: ${instances.handles} live (in the worker that answered), ≤ ${instances.max_handles}, dropped after ${instances.handle_idle_seconds} s unused`,
        ),
      summary.unsatisfied_imports.length > 0 &&
        h('div', { class: 'unsatisfied' }, 'unsatisfied imports (calls reaching them fail): ', h('code', {}, summary.unsatisfied_imports.join(', '))),
    );
  }

  showRates(rates: ServiceRates | undefined): void {
    if (!rates) return fill(this.#rates, '–');
    const mean = rates.meanSeconds === null ? '–' : `${(rates.meanSeconds * 1000).toFixed(rates.meanSeconds < 0.01 ? 2 : 0)} ms`;
    fill(
      this.#rates,
      `${rates.requestsPerSecond.toFixed(1)} req/s · mean ${mean}`,
      rates.errorsPerSecond > 0 ? h('span', { class: 'errors' }, ` · ${rates.errorsPerSecond.toFixed(1)} 5xx/s`) : '',
      rates.streamsOpen > 0 ? ` · ${rates.streamsOpen} stream(s) open` : '',
      ` · ${rates.requests} total`,
    );
  }

  /** Its description is out of date (a reload replaced it): fetch it again when shown. */
  forget(): void {
    this.#description = undefined;
    fill(this.#body);
    if ((this.element.firstElementChild as HTMLDetailsElement).open) void this.#describe();
  }

  #describe(): Promise<void> {
    this.#description ??= getJson<ServiceDescription>(servicePath(this.#summary)).then(
      (d) =>
        fill(
          this.#body,
          h('details', { class: 'wit' }, h('summary', {}, 'WIT'), h('pre', {}, d.wit)),
          d.kind === 'http' && handlerView(d),
          h('div', { class: 'methods' }, ...d.methods.map((m) => methodView(d, m))),
          d.resources.length > 0 && resourcesView(d),
        ),
      (e: Error) => {
        this.#description = undefined;
        fill(this.#body, h('div', { class: 'failed' }, `Cannot describe the service: ${e.message}`));
      },
    );
    return this.#description;
  }

  #controls(): HTMLElement {
    const path = servicePath(this.#summary);
    const config = h('textarea', { class: 'restart-config', rows: '3', placeholder: "configuration sent as the restart's body (empty: the service's configuration file)" });
    const contentType = h('input', { class: 'restart-content-type', list: 'config-types', value: this.#summary.config?.content_type ?? 'application/json' });
    const restart = h('button', { type: 'button', class: 'restart' }, 'Restart');
    const quiesce = h('button', { type: 'button', class: 'quiesce' }, 'Quiesce');
    const output = h('pre', { class: 'control-answer' });
    restart.addEventListener('click', () => {
      const body = config.value;
      void runControl(restart, output, 'POST', `${path}/restart`, body.trim() ? { body, contentType: contentType.value.trim() || 'application/octet-stream' } : undefined);
    });
    quiesce.addEventListener('click', () => void runControl(quiesce, output, 'PUT', `${path}/quiesce`));
    return h(
      'div',
      { class: 'controls' },
      config,
      h('div', { class: 'control-buttons' }, h('label', {}, 'content type ', contentType), restart, quiesce),
      output,
    );
  }
}

function methodView(service: ServiceDescription, method: MethodDescription): HTMLElement {
  const badges = [method.streaming && h('span', { class: 'badge' }, `stream: ${method.media_types?.join(', ')}`), !method.invocable && h('span', { class: 'badge muted' }, 'not invocable')];
  const details = h(
    'details',
    { class: 'method', 'data-method': method.name },
    h('summary', {}, h('span', { class: 'method-name' }, method.name), ' ', h('code', { class: 'signature' }, method.signature), ' ', ...badges),
  );
  if (!method.invocable) {
    details.append(h('p', { class: 'muted' }, method.reason ?? 'not invocable'));
    return details;
  }
  if (method.request_body) {
    // A body that streams in as the guest reads it is a client's to send, not a form's.
    details.append(h('p', { class: 'muted' }, `Reads parameter "${method.request_body.parameter}" from the request body (${method.request_body.media_type}) as it arrives, and the others from the query string: call it with curl or any HTTP client (docs/api.md §5.9).`));
    return details;
  }
  let built = false;
  details.addEventListener('toggle', () => {
    if (!details.open || built) return;
    built = true;
    details.append(invokePanel(service, method));
  });
  return details;
}

/** The form (and the JSON body it makes, which can be edited), an Invoke button, and the answer. */
function invokePanel(service: ServiceDescription, method: MethodDescription): HTMLElement {
  const invoke = h('button', { type: 'button', class: 'invoke' }, 'Invoke');
  const stop = h('button', { type: 'button', class: 'stop', disabled: true }, 'Stop');
  const sse = h('input', { type: 'checkbox', class: 'sse' });
  const answer = answerView();
  const editor = requestEditor(method.request_schema);
  let running: AbortController | undefined;
  stop.addEventListener('click', () => running?.abort());
  // The answer shows in the page; nothing awaits the handler.
  invoke.addEventListener('click', () => void send());
  async function send(): Promise<void> {
    running?.abort();
    const abort = (running = new AbortController());
    const body = editor.body();
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method.streaming && sse.checked) headers.accept = 'text/event-stream';
    const startedAt = performance.now();
    answer.clear();
    invoke.disabled = true;
    stop.disabled = !method.streaming;
    try {
      const res = await fetch(`${servicePath(service)}/invoke/${encodeURIComponent(method.name)}`, {
        method: 'POST',
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: abort.signal,
      });
      // A stream may run for minutes: Invoke again replaces it (the abort above hangs it up).
      invoke.disabled = false;
      await answer.show(res, startedAt, method.streaming === true);
    } catch (e) {
      if ((e as Error).name !== 'AbortError') answer.error(`The request failed: ${(e as Error).message}`);
    } finally {
      invoke.disabled = false;
      if (running === abort) {
        stop.disabled = true;
        running = undefined;
      }
    }
  }
  return h(
    'div',
    { class: 'invoke-panel' },
    editor.element,
    h('div', { class: 'invoke-buttons' }, invoke, method.streaming && stop, method.streaming && h('label', {}, sse, ' as Server-Sent Events')),
    answer.element,
  );
}

document.body.append(h('datalist', { id: 'config-types' }, ...CONFIG_TYPES.map((t) => h('option', { value: t }))));
main();
