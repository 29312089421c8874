// Describing services (WIT, JSON Schemas, resources) and the OpenAPI document,
// over HTTP to a worker served in process (test/support/in-process.ts).

import { expect } from 'chai';
import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { WatSource } from '../../examples/builder.js';
import { examples as examples_ } from '../../examples/index.js';
import { examplesRepository, repository } from '../support/fixtures.js';
import { COUNTERS } from '../support/resource-fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, invoke } from '../support/rt-process.js';
import { routeTemplate } from '../../lib/worker/http/operations.js';

/**
 * A component whose functions take and return a resource it imports (rt makes
 * no handles to those): listed, but not invocable. Its core module is a
 * wasm-tools dummy.
 */
async function withImportedResource(): Promise<Uint8Array> {
  const wit = `package acme:files@1.0.0;
interface host {
  resource file { size: func() -> u64; }
}
interface api {
  use host.{file};
  open: func(name: string) -> file;
  count: func() -> u32;
}
world files { import host; export api; }`;
  return componentNew(await componentEmbed({ dummy: true, witSource: wit, world: 'files' }), []);
}

interface MethodDescription {
  name: string;
  signature: string;
  invocable: boolean;
  reason?: string;
  request_schema?: object;
  response_schema?: object;
}

describe('introspection (in process)', function () {
  this.timeout(240_000);
  let rt: InProcessRt;

  before(async () => {
    const examples = await examplesRepository();
    const calculator = (await examples_.find((e) => e.name === 'calculator')!.source()) as WatSource;
    const extra = await repository({
      'files.wasm': { raw: await withImportedResource() },
      counters: COUNTERS,
      // An older version of the calculator example's package: shadowed by 1.0.0.
      'calculator-old': { ...calculator, wit: calculator.wit.replace('@1.0.0', '@0.9.0'), wat: calculator.wat.replaceAll('@1.0.0', '@0.9.0') },
    });
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${examples}", "file://${extra}"]` });
  });

  after(async () => {
    await rt?.stop();
  });

  it('describes a service with its full WIT, printed from the component binary', async () => {
    const res = await call(`${rt.url}/api/services/example/greeter`, { method: 'GET' });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ domain: 'example', service: 'greeter', version: '1.0.0', state: 'active' });
    const wit = res.body.wit as string;
    expect(wit).to.include('package example:greeter@1.0.0;');
    expect(wit).to.include('record person {\n    name: string,\n    age: u8,\n  }');
    expect(wit).to.include('greet-person: func(person: person) -> string;');
    expect(wit).to.match(/world greeter \{\n\s+export greeter;\n\}/);
  });

  it('gives each method JSON Schemas that accept the bodies invoke accepts', async () => {
    const res = await call(`${rt.url}/api/services/example/greeter`, { method: 'GET' });
    const method = (res.body.methods as MethodDescription[]).find((m) => m.name === 'greet-person')!;
    const ajv = new Ajv2020({ strict: false });
    const request = ajv.compile(method.request_schema!);
    const good = { person: { name: 'Ada', age: 36 } };
    const bad = { person: { name: 'Ada', age: 300 } };
    expect(request(good)).to.equal(true);
    expect(request(bad)).to.equal(false);
    expect((await invoke(rt, 'example/greeter/invoke/greet-person', good)).status).to.equal(200);
    expect((await invoke(rt, 'example/greeter/invoke/greet-person', bad)).status).to.equal(400);
    const response = ajv.compile(method.response_schema!);
    expect(response((await invoke(rt, 'example/greeter/invoke/greet-person', good)).body)).to.equal(true);
  });

  it('lists methods that take or return resources the component imports as not invocable, and answers 400 for them', async () => {
    const res = await call(`${rt.url}/api/services/acme/files`, { method: 'GET' });
    const methods = res.body.methods as MethodDescription[];
    expect(methods.find((m) => m.name === 'count')).to.include({ invocable: true, signature: 'func() -> u32' });
    const open = methods.find((m) => m.name === 'open')!;
    expect(open).to.include({ invocable: false, signature: 'func(name: string) -> file' });
    expect(open.reason).to.include('a resource the component imports');
    expect(open).not.to.have.property('request_schema');
    expect(res.body.resources).to.deep.equal([]);
    const call400 = await invoke(rt, 'acme/files/invoke/open', { name: 'x' });
    expect(call400.status).to.equal(400);
    expect(call400.body).to.include({ error: 'method not invocable', code: 'RT_ERR_METHOD_NOT_INVOCABLE', service: 'acme.files', method: 'open' });
    // Refused before its body is decoded (docs/decisions.md): a body that is not JSON gets the same answer.
    const notJson = await call(`${rt.url}/api/services/acme/files/invoke/open`, { body: '{"name":', contentType: 'application/json' });
    expect([notJson.status, notJson.body.code]).to.deep.equal([400, 'RT_ERR_METHOD_NOT_INVOCABLE']);
  });

  it("lists a service's resources apart from its methods, and describes them with their schemas and a handle's form", async () => {
    const listing = await call(`${rt.url}/api/services`, { method: 'GET' });
    const listed = (listing.body.services as { service: string; methods: MethodDescription[]; resources: { name: string; statics: string[] }[]; instances: object }[]).find((s) => s.service === 'counters')!;
    expect(listed.methods.map((m) => m.name)).to.have.members(['counter.merge', 'total', 'consume', 'pair', 'both', 'live', 'dropped']);
    expect(listed.resources.map((r) => [r.name, r.statics])).to.deep.equal([['counter', ['counter.merge']]]);
    expect(listed.instances).to.include.keys('handles', 'max_handles', 'handle_idle_seconds');
    const res = await call(`${rt.url}/api/services/acme/counters`, { method: 'GET' });
    const [counter] = res.body.resources as { constructor: MethodDescription; methods: MethodDescription[]; handle: object }[];
    expect(counter.constructor).to.include({ signature: 'constructor(start: s64)', invocable: true });
    const add = counter.methods.find((m) => m.name === 'add')!;
    expect(add.signature).to.equal('func(n: s64) -> s64');
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(add.request_schema!, { n: 1 })).to.equal(true);
    expect(ajv.validate(counter.handle, { $handle: 'x' })).to.equal(true);
    expect(res.body.wit).to.include('merge: static func(a: borrow<counter>, b: borrow<counter>) -> counter;');
  });

  it('serves the higher package version when two components claim one address, and lists the other as shadowed', async () => {
    const res = await call(`${rt.url}/api/services`, { method: 'GET' });
    const calculators = (res.body.services as { service: string; version: string }[]).filter((s) => s.service === 'calculator');
    expect(calculators.map((c) => c.version)).to.deep.equal(['1.0.0']);
    const shadowed = (res.body.failed as { source: string; error: string }[]).find((f) => f.source.endsWith('calculator-old.wasm'))!;
    expect(shadowed.error).to.match(/^shadowed: .*calculator\.wasm serves example\/calculator at version 1\.0\.0$/);
  });

  it('404 for describing an unknown service', async () => {
    const res = await call(`${rt.url}/api/services/nope/none`, { method: 'GET' });
    expect(res.status).to.equal(404);
    expect(res.body).to.include({ error: 'unknown service', code: 'RT_ERR_UNKNOWN_SERVICE', service: 'nope.none' });
  });

  it("documents every operation of rt's own the worker serves, by the route it serves it at (its services' are per service)", async () => {
    const document = (await call(`${rt.url}/api/openapi.json`, { method: 'GET' })).body as { paths: Record<string, Record<string, unknown>> };
    const perService = new Set(['invoke', 'make-handle', 'call-handle', 'drop-handle', 'list-handles', 'http-handler']);
    const own = rt.worker.operations.all.filter((op) => !perService.has(op.name));
    expect(own.map((op) => op.name)).to.include.members(['reload', 'restart', 'quiesce', 'metrics', 'health']);
    for (const op of own) expect(document.paths[`/api${routeTemplate(op.path)}`], `${op.method} ${op.path}`).to.have.property(op.method.toLowerCase());
  });

  it('serves an OpenAPI 3.1 document that validates, with one operation per invocable method and the resources', async () => {
    const res = await call(`${rt.url}/api/openapi.json`, { method: 'GET' });
    expect(res.status).to.equal(200);
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.valid, JSON.stringify(result.errors)).to.equal(true);
    expect(validator.version).to.equal('3.1');
    const paths = Object.keys(res.body.paths as object);
    expect(paths).to.include('/api/services/example/greeter/invoke/greet');
    expect(paths).to.include('/api/services/example/calculator/invoke/divide');
    expect(paths).to.include('/api/services/acme/files/invoke/count');
    expect(paths).not.to.include('/api/services/acme/files/invoke/open');
    expect(paths).to.include.members([
      '/api/services/acme/counters/invoke/counter.merge',
      '/api/services/acme/counters/resources/counter',
      '/api/services/acme/counters/handles/{handle}/invoke/add',
      '/api/services/acme/counters/handles/{handle}',
      '/api/services/acme/counters/handles',
    ]);
    expect(paths).not.to.include('/api/services/acme/counters/invoke/add');
    const op = (res.body.paths as Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>)['/api/services/example/greeter/invoke/greet'];
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(op.post.requestBody.content['application/json'].schema, { name: 'World' })).to.equal(true);
  });
});
