// Resources through handles (docs/api.md §5.1.2), over HTTP to rt in process,
// on components rt
// did not build: wit-bindgen's runtime-test components for resources, written
// in C, as jco ships them (test/fixtures/wit-bindgen/NOTICE.md). Every resource
// function `resources.component.wasm` exports is called through the handle
// routes, with the values its C computes; `resource-import-and-export` is the
// negative case: a function of a resource the component imports stays listed,
// not invocable.

import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { redactHandleId as shortened } from '../../lib/worker/execution/handle-ids.js';
import { repository } from '../support/fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, invoke, type JsonResponse } from '../support/rt-process.js';

const FIXTURES = new URL('../../../test/fixtures/wit-bindgen/', import.meta.url);

interface Listed {
  domain: string;
  service: string;
  methods: { name: string; invocable: boolean; reason?: string }[];
  resources: { name: string; constructor: { invocable: boolean } | null; methods: { name: string; invocable: boolean }[]; statics: string[] }[];
  unsatisfied_imports: string[];
}

describe('wit-bindgen resources in C (in process)', function () {
  this.timeout(240_000);
  let rt: InProcessRt;
  const SERVICE = 'default/resources';

  before(async () => {
    const repo = await repository({
      'resources.wasm': { raw: await readFile(new URL('resources.component.wasm', FIXTURES)) },
      'resource-import-and-export.wasm': { raw: await readFile(new URL('resource-import-and-export.component.wasm', FIXTURES)) },
    });
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${repo}"]` });
  });

  after(async () => {
    await rt?.stop();
  });

  const url = (path: string) => `${rt.url}/api/services/${SERVICE}/${path}`;
  const post = (path: string, json: unknown = {}): Promise<JsonResponse> => call(url(path), { body: JSON.stringify(json), contentType: 'application/json' });
  const ref = (id: string) => ({ $handle: id });

  /** A new handle through the resource's constructor. */
  async function create(resource: string, args: unknown): Promise<string> {
    const res = await post(`resources/${resource}`, args);
    expect(res.status, res.text).to.equal(201);
    const id = res.body.handle as string;
    expect(res.headers.get('location')).to.equal(`/api/services/${SERVICE}/handles/${id}`);
    return id;
  }

  /** The result of calling `method` on handle `id`. */
  async function method(id: string, name: string, args: unknown = {}): Promise<unknown> {
    const res = await post(`handles/${id}/invoke/${name}`, args);
    expect(res.status, res.text).to.equal(200);
    return res.body.result;
  }

  /** The result of invoking `name` (a function or a static). */
  async function fn(name: string, args: unknown = {}): Promise<unknown> {
    const res = await post(`invoke/${name}`, args);
    expect(res.status, res.text).to.equal(200);
    return res.body.result;
  }

  async function drop(id: string): Promise<number> {
    return (await call(url(`handles/${id}`), { method: 'DELETE' })).status;
  }

  /** What a call on a handle that has ended answers. */
  async function expectGone(id: string, how: RegExp): Promise<void> {
    const res = await post(`handles/${id}/invoke/get-a`);
    expect(res.status, res.text).to.equal(410);
    expect(res.body).to.include({ code: 'RT_ERR_HANDLE_GONE' });
    expect(res.body.details).to.match(how);
  }

  async function liveHandles(): Promise<Map<string, string>> {
    const res = await call(url('handles'), { method: 'GET' });
    expect(res.status).to.equal(200);
    return new Map((res.body.handles as { handle: string; resource: string }[]).map((h) => [h.handle, h.resource]));
  }

  it('lists the three exported resources with every member invocable, and the import rt does not provide', async () => {
    const res = await call(url(''), { method: 'GET' });
    expect(res.status).to.equal(200);
    const listed = res.body as unknown as Listed;
    const members = Object.fromEntries(
      listed.resources.map((r) => [r.name, { constructor: r.constructor?.invocable, methods: r.methods.map((m) => [m.name, m.invocable]), statics: r.statics }]),
    );
    expect(members).to.deep.equal({
      x: { constructor: true, methods: [['get-a', true], ['set-a', true]], statics: ['x.add'] },
      z: { constructor: true, methods: [['get-a', true]], statics: ['z.num-dropped'] },
      'kebab-case': { constructor: true, methods: [['get-a', true]], statics: ['kebab-case.take-owned'] },
    });
    expect(listed.methods.map((m) => [m.name, m.invocable])).to.deep.equal([
      ['x.add', true],
      ['z.num-dropped', true],
      ['kebab-case.take-owned', true],
      ['add', true],
      ['consume', true],
      ['test-imports', true],
    ]);
    expect(listed.unsatisfied_imports).to.deep.equal(['imports']);
  });

  it('x: a constructor, a getter and a setter on the handle, and a static that takes it as own and gives it back as a new handle', async () => {
    const x = await create('x', { a: 5 });
    expect(await method(x, 'get-a')).to.equal(5);
    expect(await method(x, 'set-a', { a: -42 })).to.equal(null);
    expect(await method(x, 'get-a')).to.equal(-42);

    // add(x: own<x>, a) adds to the same object and returns it: the old handle moved into the call.
    const added = (await fn('x.add', { x: ref(x), a: 50 })) as { $handle: string };
    expect(added).to.have.key('$handle');
    expect(added.$handle).to.not.equal(x);
    expect(await method(added.$handle, 'get-a')).to.equal(8);
    await expectGone(x, /moved it into that call/);

    // The static by its interface-qualified name, as an array of arguments.
    const again = (await fn('exports.x.add', [ref(added.$handle), 2])) as { $handle: string };
    expect(await method(again.$handle, 'get-a')).to.equal(10);
    expect(await drop(again.$handle)).to.equal(204);
    await expectGone(again.$handle, /dropped/);
  });

  it('z: add borrows two handles and makes a third; dropping one runs its destructor, which num-dropped counts', async () => {
    const before = (await fn('z.num-dropped')) as number;
    const a = await create('z', { a: 3 });
    const b = await create('z', { a: 4 });
    const sum = (await fn('add', { a: ref(a), b: ref(b) })) as { $handle: string };
    expect(await method(sum.$handle, 'get-a')).to.equal(7);
    // Borrowed, not moved: both still answer.
    expect(await method(a, 'get-a')).to.equal(3);
    expect(await method(b, 'get-a')).to.equal(4);
    expect(await fn('z.num-dropped')).to.equal(before);

    expect(await drop(a)).to.equal(204);
    expect(await fn('z.num-dropped')).to.equal(before + 1);
    await expectGone(a, /dropped/);
    expect(await drop(a)).to.equal(410);
    expect(await drop(b)).to.equal(204);
    expect(await drop(sum.$handle)).to.equal(204);
    expect(await fn('z.num-dropped')).to.equal(before + 3);
  });

  it('kebab-case: a u32 beyond s32 through the constructor and back; take-owned consumes the handle', async () => {
    const k = await create('kebab-case', { a: 4_000_000_000 });
    expect(await method(k, 'get-a')).to.equal(4_000_000_000);
    expect(await fn('kebab-case.take-owned', { k: ref(k) })).to.equal(4_000_000_000);
    await expectGone(k, /moved it into that call/);
  });

  it('consume takes an x as own; a handle to another resource, or one never issued, is refused before the call', async () => {
    const x = await create('x', { a: 1 });
    const z = await create('z', { a: 1 });
    const wrong = await post('invoke/consume', { x: ref(z) });
    expect(wrong.status).to.equal(400);
    expect(wrong.body).to.include({ code: 'RT_ERR_INVALID_ARGUMENTS', details: 'x: the handle is a z, not a x' });
    const unknown = await post('invoke/consume', { x: ref('never-issued') });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include({ code: 'RT_ERR_UNKNOWN_HANDLE' });

    expect(await fn('consume', { x: ref(x) })).to.equal(null);
    await expectGone(x, /moved it into that call/);
    // The refused calls left the z alone.
    expect(await method(z, 'get-a')).to.equal(1);
    expect(await drop(z)).to.equal(204);
  });

  it('lists live handles by resource, and forgets dropped and moved ones', async () => {
    const x = await create('x', { a: 1 });
    const k = await create('kebab-case', { a: 2 });
    // Listed shortened: rt has no control token here.
    let live = await liveHandles();
    expect(live.get(shortened(x))).to.equal('x');
    expect(live.get(shortened(k))).to.equal('kebab-case');
    expect(await drop(x)).to.equal(204);
    await fn('kebab-case.take-owned', { k: ref(k) });
    live = await liveHandles();
    expect(live.has(shortened(x))).to.equal(false);
    expect(live.has(shortened(k))).to.equal(false);
  });

  it('test-imports needs the import the host would provide (imports, resource y): rt stubs it, the call answers 500 naming it and ends its instance with its handles', async () => {
    const held = await create('x', { a: 1 });
    const res = await post('invoke/test-imports');
    expect(res.status).to.equal(500);
    expect(res.body).to.include({ code: 'RT_ERR_UNSATISFIED_IMPORT' });
    expect(res.body.details).to.include('imports#[constructor]y');
    await expectGone(held, /its instance ended: a call on it trapped: unsatisfied import imports#\[constructor\]y/);
    // A fresh instance serves the next call.
    const x = await create('x', { a: 9 });
    expect(await method(x, 'get-a')).to.equal(9);
    expect(await drop(x)).to.equal(204);
  });

  it('resource-import-and-export: a world-level function of the imported thing is listed not invocable, with the reason', async () => {
    const res = await call(`${rt.url}/api/services/test/resource-import-and-export`, { method: 'GET' });
    expect(res.status).to.equal(200);
    const listed = res.body as unknown as Listed;
    const reason = 'parameter "a" holds a handle to thing, a resource the component imports (rt makes no such handles)';
    expect(listed.methods.find((m) => m.name === 'toplevel-export')).to.deep.include({ invocable: false, reason });
    // The exported thing is the component's own: its members are invocable (they call the imported thing, which rt does not provide).
    const thing = listed.resources.find((r) => r.name === 'thing')!;
    expect(thing.constructor?.invocable).to.equal(true);
    expect(thing.methods.map((m) => [m.name, m.invocable])).to.deep.equal([['foo', true], ['bar', true]]);
    expect(thing.statics).to.deep.equal(['thing.baz']);

    const refused = await invoke(rt, 'test/resource-import-and-export/invoke/toplevel-export', { a: { $handle: 'x' } });
    expect(refused.status).to.equal(400);
    expect(refused.body).to.include({ code: 'RT_ERR_METHOD_NOT_INVOCABLE', details: reason });
    const made = await invoke(rt, 'test/resource-import-and-export/resources/thing', { v: 1 });
    expect(made.status).to.equal(500);
    expect(made.body).to.include({ code: 'RT_ERR_UNSATISFIED_IMPORT' });
    expect(made.body.details).to.include('test:resource-import-and-export/test#[constructor]thing');
  });
});
