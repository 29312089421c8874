// A service's resources and their handles (docs/api.md §5.1.2): per resource
// its constructor's form (Create makes a handle) and a panel to call a
// method of one of its handles; per service the live handles, each with a
// Drop button. The handles shown are GET .../handles', fetched again after
// each create, call and drop, and on Refresh. The listing shortens ids
// unless the user entered the control token: a handle is then usable here
// if this tab made it (its whole id came in the 201), and listed as the
// others see it otherwise.

import { answerView, type AnswerView } from './answer.js';
import { getJson, servicePath, type HandleEntry, type MemberDescription, type ResourceDescription, type ServiceDescription } from './api.js';
import { fill, h } from './dom.js';
import { requestEditor } from './form.js';

/** The live handles of one service, shared by its resources' panels. */
class Handles {
  #entries: HandleEntry[] = [];
  /** Whole ids of the handles this tab made, by their shortened form. */
  readonly #made = new Map<string, string>();
  readonly #listeners: (() => void)[] = [];
  readonly #notice = h('div', { class: 'handles-notice', role: 'status' });

  constructor(readonly service: ServiceDescription) {}

  get entries(): HandleEntry[] {
    return this.#entries;
  }

  get notice(): HTMLElement {
    return this.#notice;
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Remembers the whole id of a handle this tab made. */
  made(id: string): void {
    this.#made.set(shortened(id), id);
  }

  /** The whole id of `entry`, when the listing or this tab knows it: only then can it be called or dropped here. */
  wholeId(entry: HandleEntry): string | undefined {
    return entry.handle.endsWith('…') ? this.#made.get(entry.handle) : entry.handle;
  }

  async refresh(): Promise<void> {
    try {
      this.#entries = (await getJson<{ handles: HandleEntry[] }>(`${servicePath(this.service)}/handles`, { withToken: true })).handles;
      fill(this.#notice);
    } catch (e) {
      fill(this.#notice, `Cannot list the handles: ${(e as Error).message}`);
    }
    for (const listener of this.#listeners) listener();
  }
}

/** An id as the listing shortens it (lib/worker/execution/handle-ids.ts, redactHandleId): the worker, a dot and 6 characters. */
function shortened(id: string): string {
  const dot = id.indexOf('.');
  return dot === -1 ? '…' : `${id.slice(0, dot + 7)}…`;
}

/** The resources of a service, and its live handles. */
export function resourcesView(service: ServiceDescription): HTMLElement {
  const handles = new Handles(service);
  const element = h(
    'div',
    { class: 'resources' },
    h('h3', {}, 'Resources'),
    ...service.resources.map((r) => resourceView(service, r, handles)),
    handlesView(handles),
  );
  void handles.refresh();
  return element;
}

/** Whether `entry` is a handle to `resource` (the list names it as clients do: by one of its names). */
const isOf = (entry: HandleEntry, resource: ResourceDescription): boolean => entry.resource === resource.name || resource.aliases.includes(entry.resource);

function resourceView(service: ServiceDescription, resource: ResourceDescription, handles: Handles): HTMLElement {
  const methods = resource.methods.filter((m) => m.invocable);
  const details = h(
    'details',
    { class: 'resource', 'data-resource': resource.name },
    h(
      'summary',
      {},
      h('span', { class: 'resource-name' }, `resource ${resource.name}`),
      ' ',
      h('span', { class: 'muted' }, `${resource.methods.length} method(s)${resource.statics.length > 0 ? `; statics (among the methods): ${resource.statics.join(', ')}` : ''}`),
    ),
    h(
      'ul',
      { class: 'members' },
      resource.constructor && h('li', {}, h('code', { class: 'signature' }, resource.constructor.signature)),
      ...resource.methods.map((m) =>
        h('li', {}, h('span', { class: 'method-name' }, m.name), ': ', h('code', { class: 'signature' }, m.signature), !m.invocable && h('span', { class: 'badge muted' }, 'not invocable')),
      ),
    ),
  );
  let built = false;
  details.addEventListener('toggle', () => {
    if (!details.open || built) return;
    built = true;
    details.append(createPanel(service, resource, handles), methods.length > 0 ? callPanel(service, resource, methods, handles) : h('p', { class: 'muted' }, 'No method rt can call.'));
  });
  return details;
}

/** The constructor's form and a Create button: 201 gives the new handle. */
function createPanel(service: ServiceDescription, resource: ResourceDescription, handles: Handles): HTMLElement {
  const ctor = resource.constructor;
  if (!ctor) return h('p', { class: 'muted create-panel' }, `No constructor: handles to ${resource.name} come from the functions that return one.`);
  if (!ctor.invocable) return h('p', { class: 'muted create-panel' }, `The constructor is not invocable: ${ctor.reason ?? ''}`);
  const editor = requestEditor(ctor.request_schema);
  const create = h('button', { type: 'button', class: 'create' }, 'Create');
  const answer = answerView();
  create.addEventListener('click', () => {
    void send(create, answer, `${servicePath(service)}/resources/${encodeURIComponent(resource.name)}`, 'POST', editor.body(), (made) => handles.made((made as { handle: string }).handle)).then(() => handles.refresh());
  });
  return h('div', { class: 'create-panel' }, h('h4', {}, `New ${resource.name}`), editor.element, h('div', { class: 'invoke-buttons' }, create), answer.element);
}

/** Choose a handle and a method, fill the method's form, Call. */
function callPanel(service: ServiceDescription, resource: ResourceDescription, methods: (MemberDescription & { name: string })[], handles: Handles): HTMLElement {
  const handleSelect = h('select', { class: 'handle-select', 'aria-label': 'handle' });
  const methodSelect = h('select', { class: 'method-select', 'aria-label': 'method' }, ...methods.map((m) => h('option', { value: m.name }, `${m.name}: ${m.signature}`)));
  const formHost = h('div', { class: 'method-request' });
  const call = h('button', { type: 'button', class: 'call' }, 'Call');
  const answer = answerView();
  let editor = requestEditor(undefined);
  const showMethod = () => {
    editor = requestEditor(methods.find((m) => m.name === methodSelect.value)?.request_schema);
    fill(formHost, editor.element);
  };
  methodSelect.addEventListener('change', showMethod);
  showMethod();
  const showHandles = () => {
    const chosen = handleSelect.value;
    const ours = handles.entries.filter((e) => isOf(e, resource)).flatMap((e) => handles.wholeId(e) ?? []);
    fill(handleSelect, ours.length === 0 ? h('option', { value: '' }, `no ${resource.name} of this tab: create one (or enter the control token)`) : null, ...ours.map((id) => h('option', { value: id }, id)));
    if (ours.includes(chosen)) handleSelect.value = chosen;
    call.disabled = ours.length === 0;
  };
  handles.onChange(showHandles);
  showHandles();
  call.addEventListener('click', () => {
    const path = `${servicePath(service)}/handles/${encodeURIComponent(handleSelect.value)}/invoke/${encodeURIComponent(methodSelect.value)}`;
    void send(call, answer, path, 'POST', editor.body()).then(() => handles.refresh());
  });
  return h(
    'div',
    { class: 'call-panel' },
    h('h4', {}, `Call a ${resource.name}'s method`),
    h('div', { class: 'invoke-buttons' }, h('label', {}, 'handle ', handleSelect), h('label', {}, 'method ', methodSelect)),
    formHost,
    h('div', { class: 'invoke-buttons' }, call),
    answer.element,
  );
}

/** The live handles of the service, newest first, each with a Drop button. */
function handlesView(handles: Handles): HTMLElement {
  const rows = h('tbody', {});
  const refresh = h('button', { type: 'button', class: 'refresh-handles' }, 'Refresh');
  const answer = answerView();
  refresh.addEventListener('click', () => void handles.refresh());
  const when = (iso: string) => h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleTimeString());
  handles.onChange(() => {
    const sorted = [...handles.entries].sort((a, b) => b.created.localeCompare(a.created));
    fill(
      rows,
      sorted.length === 0 && h('tr', {}, h('td', { colspan: '8', class: 'muted' }, 'No live handles.')),
      ...sorted.map((e) => {
        const id = handles.wholeId(e);
        const drop = h('button', { type: 'button', class: 'drop', ...(id ? {} : { disabled: '', title: 'made elsewhere: only its maker, or the control token, has its whole id' }) }, 'Drop');
        if (id) drop.addEventListener('click', () => void send(drop, answer, `${servicePath(handles.service)}/handles/${encodeURIComponent(id)}`, 'DELETE').then(() => handles.refresh()));
        return h('tr', { 'data-handle': id ?? e.handle }, h('td', {}, h('code', {}, id ?? e.handle)), h('td', {}, e.resource), h('td', {}, e.scope), h('td', {}, String(e.worker)), h('td', {}, when(e.created)), h('td', {}, when(e.last_used)), h('td', {}, when(e.expires)), h('td', {}, drop));
      }),
    );
  });
  return h(
    'div',
    { class: 'handles' },
    h('h4', {}, 'Live handles ', refresh),
    handles.notice,
    h('table', { class: 'handles-table' }, h('thead', {}, h('tr', {}, ...['handle', 'resource', 'scope', 'worker', 'created', 'last used', 'expires', ''].map((t) => h('th', {}, t)))), rows),
    answer.element,
  );
}

/** Sends one request of the resource routes and shows its answer (a 204 as its status line); `onCreated` gets a 201's JSON. */
async function send(button: HTMLButtonElement, answer: AnswerView, path: string, method: 'POST' | 'DELETE', body?: string, onCreated?: (json: unknown) => void): Promise<void> {
  button.disabled = true;
  const startedAt = performance.now();
  answer.clear();
  try {
    const res = await fetch(path, { method, headers: body !== undefined ? { 'content-type': 'application/json' } : {}, ...(body !== undefined ? { body } : {}) });
    if (res.status === 201 && onCreated) onCreated(await res.clone().json());
    await answer.show(res, startedAt, false);
  } catch (e) {
    answer.error(`The request failed: ${(e as Error).message}`);
  } finally {
    button.disabled = false;
  }
}
