// What the listing, describe and the OpenAPI document say of a service's
// exported resources (docs/api.md §5.1.2): their constructors and methods
// apart from the methods invoke reaches, statics among those, JSON Schemas
// without `self`, a handle's JSON form, and the handle operations. Real
// components: COUNTERS hosted in this process, and a component of two
// resources sharing names (a wasm-tools dummy core module: described, never called).

import { expect } from 'chai';
import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../lib/openapi/document.js';
import type { ServiceDescriptor } from '../../lib/service.js';
import type { HostedService } from '../../lib/worker/execution/hosted-service.js';
import { ServiceRegistry } from '../../lib/worker/execution/registry.js';
import { description, summary } from '../../lib/worker/http/views.js';
import type { WorkerState } from '../../lib/worker/http/worker-state.js';
import { catalog, silentLog } from '../support/hosting.js';
import { COUNTERS } from '../support/resource-fixtures.js';

/** Two interfaces each exporting a resource `cell`: one with a constructor, one made by a function; both have `get`. */
async function cells(): Promise<Uint8Array> {
  const wit = `package acme:cells@1.0.0;
interface a {
  resource cell {
    constructor(start: u32);
    get: func() -> u32;
    bump: func(by: u32) -> result<u32, string>;
  }
}
interface b {
  resource cell {
    get: func() -> string;
    set: func(v: string);
  }
  make: func() -> cell;
}
world cells { export a; export b; }`;
  return componentNew(await componentEmbed({ dummy: true, witSource: wit, world: 'cells' }), []);
}

const STATE: WorkerState = { loaded: true, clusterReady: true, workerId: 1, placements: {} };

type Schema = Record<string, unknown>;
interface Member {
  name?: string;
  signature: string;
  invocable: boolean;
  request_schema?: Schema;
  response_schema?: Schema;
  error_schema?: Schema;
}
interface Resource {
  name: string;
  aliases: string[];
  interface: string | null;
  constructor: Member | null;
  methods: Member[];
  statics: string[];
  handle?: Schema;
}
interface Operation {
  summary: string;
  description?: string;
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: Schema }> }>;
}
interface PathItem {
  parameters?: { name: string; in: string; required: boolean }[];
  post: Operation;
  get: Operation;
  delete: Operation;
}
type Paths = Record<string, PathItem>;

describe('resources in the listing, describe and OpenAPI', function () {
  this.timeout(120_000);
  // Formats are notes here (date-time): no format checks, and no warnings about them.
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  let registry: ServiceRegistry;
  let counters: HostedService;
  let services: ServiceDescriptor[];

  before(async () => {
    const built = await catalog({ counters: COUNTERS, 'counters.toml': { raw: 'max_handles = 7\nhandle_idle_seconds = 60\n' }, 'cells.wasm': { raw: await cells() } });
    expect(built.failures).to.deep.equal([]);
    services = built.services;
    registry = new ServiceRegistry({ timeoutMs: 1_000, memoryCapBytes: 16 << 20, threadHeapMb: 128, log: silentLog });
    await registry.load(services.filter((s) => s.id.service === 'counters'), []);
    counters = registry.get('acme', 'counters')!;
  });

  after(async () => {
    await registry?.load([], []);
  });

  /** A resource of acme/cells as describe gives it (the service is described quiesced: a dummy core module cannot be instantiated). */
  let cellResources: Resource[];
  const resourceOf = (name: string) => cellResources.find((r) => r.name === name)!;

  before(async () => {
    const hosting = new ServiceRegistry({ timeoutMs: 1_000, memoryCapBytes: 16 << 20, threadHeapMb: 128, log: silentLog });
    await hosting.load([{ ...services.find((s) => s.id.service === 'cells')!, quiesced: true }], []);
    cellResources = description(hosting.get('acme', 'cells')!, STATE).resources as Resource[];
    await hosting.load([], []);
  });

  describe('the listing', () => {
    it('lists as methods what invoke reaches: functions and statics, not constructors nor methods of resources', () => {
      const listed = summary(counters, STATE);
      expect(listed.methods.map((m) => m.name)).to.deep.equal(['counter.merge', 'total', 'consume', 'pair', 'both', 'live', 'dropped']);
      expect(listed.methods.find((m) => m.name === 'counter.merge')).to.include({ signature: 'func(a: borrow<counter>, b: borrow<counter>) -> counter', invocable: true });
      expect(listed.methods.find((m) => m.name === 'total')).to.include({ signature: 'func(all: list<borrow<counter>>) -> s64' });
    });

    it('lists each resource with its constructor, its methods as WIT writes them (no self), and its statics by method name', () => {
      expect(summary(counters, STATE).resources).to.deep.equal([
        {
          name: 'counter',
          aliases: ['counter', 'counters.counter'],
          interface: 'acme:counters/counters@1.0.0',
          constructor: { signature: 'constructor(start: s64)', invocable: true },
          methods: [
            { name: 'add', signature: 'func(n: s64) -> s64', invocable: true },
            { name: 'value', signature: 'func() -> s64', invocable: true },
            { name: 'fail', signature: 'func()', invocable: true },
          ],
          statics: ['counter.merge'],
        },
      ]);
    });

    it("gives the instances' handles in this worker, and the sidecar's max_handles and handle_idle_seconds", () => {
      expect(summary(counters, STATE).instances).to.include({ handles: counters.liveHandles(), max_handles: 7, handle_idle_seconds: 60 });
    });
  });

  describe('describe', () => {
    const resource = () => (description(counters, STATE).resources as Resource[])[0];

    it('gives a constructor the schema of its parameters, and the new handle as its answer', () => {
      const ctor = resource().constructor!;
      expect(ajv.validate(ctor.request_schema!, { start: 5 })).to.equal(true);
      expect(ajv.validate(ctor.request_schema!, ['5'])).to.equal(true);
      expect(ajv.validate(ctor.request_schema!, {})).to.equal(false);
      expect(ajv.validate(ctor.response_schema!, { handle: 'h1' })).to.equal(true);
      expect(ajv.validate(ctor.response_schema!, { result: { $handle: 'h1' } })).to.equal(false);
    });

    it("gives a method the schemas of its parameters without self, which the handle is", () => {
      const add = resource().methods.find((m) => m.name === 'add')!;
      expect(JSON.stringify(add.request_schema)).not.to.include('self');
      expect(ajv.validate(add.request_schema!, { n: 5 })).to.equal(true);
      expect(ajv.validate(add.request_schema!, [5])).to.equal(true);
      expect(ajv.validate(add.request_schema!, { self: { $handle: 'h1' }, n: 5 })).to.equal(false);
      expect(ajv.validate(add.response_schema!, { result: 5 })).to.equal(true);
      const value = resource().methods.find((m) => m.name === 'value')!;
      expect(ajv.validate(value.request_schema!, {})).to.equal(true);
      expect(ajv.validate(value.request_schema!, [])).to.equal(true);
    });

    it("gives the handle's JSON form, the one the methods' own and borrow parameters take", () => {
      const handle = resource().handle!;
      expect(ajv.validate(handle, { $handle: 'h1' })).to.equal(true);
      expect(ajv.validate(handle, { handle: 'h1' })).to.equal(false);
      const merge = (description(counters, STATE).methods as unknown as { name: string; request_schema: Schema }[]).find((m) => m.name === 'counter.merge')!;
      expect(ajv.validate(merge.request_schema, { a: { $handle: 'h1' }, b: { $handle: 'h2' } })).to.equal(true);
      expect(ajv.validate(merge.request_schema, { a: 'h1', b: 'h2' })).to.equal(false);
    });

    it('keeps statics among the methods, and no constructor or resource method there', () => {
      const names = (description(counters, STATE).methods as { name: string }[]).map((m) => m.name);
      expect(names).to.include('counter.merge');
      expect(names).not.to.include.members(['counter', 'add', 'value', 'fail']);
    });

    it('names resources by interface when two share a name, and has no constructor for one made by functions', () => {
      expect(cellResources.map((r) => [r.name, r.aliases])).to.deep.equal([
        ['a.cell', ['a.cell']],
        ['b.cell', ['b.cell']],
      ]);
      expect(resourceOf('b.cell').constructor).to.equal(null);
      const bump = resourceOf('a.cell').methods.find((m) => m.name === 'bump')!;
      expect(bump.signature).to.equal('func(by: u32) -> result<u32, string>');
      expect(ajv.validate(bump.error_schema!, 'too big')).to.equal(true);
      expect(ajv.validate(bump.response_schema!, { result: 3 })).to.equal(true);
    });
  });

  describe('the OpenAPI document', () => {
    const document = () => openApiDocument(services, { version: '1.2.3', token: false });
    const paths = () => document().paths as Paths;

    it('validates as OpenAPI 3.1', async () => {
      const validator = new Validator();
      const result = await validator.validate(document());
      expect(result.valid, JSON.stringify(result.errors)).to.equal(true);
      expect(validator.version).to.equal('3.1');
    });

    it('has invoke operations for functions and statics only', () => {
      const invoke = Object.keys(paths()).filter((p) => p.startsWith('/api/services/acme/counters/invoke/'));
      expect(invoke.map((p) => p.split('/').at(-1))).to.have.members(['counter.merge', 'total', 'consume', 'pair', 'both', 'live', 'dropped']);
    });

    it('makes a resource through its constructor: 201 with the handle and a Location', () => {
      const create = paths()['/api/services/acme/counters/resources/counter'].post;
      expect(create.summary).to.equal('counter: constructor(start: s64)');
      expect(ajv.validate(create.requestBody!.content['application/json'].schema, { start: 1 })).to.equal(true);
      const created = create.responses['201'];
      expect(created.headers).to.have.property('Location');
      expect(ajv.validate(created.content!['application/json'].schema, { handle: 'h1' })).to.equal(true);
      expect(create.responses).to.include.keys('400', '404', '409', '500', '503');
      expect(create.responses['503'].headers).to.have.property('Retry-After');
      // The handle scope, an optional header (the sidecar's handle_scope can require it).
      const scope = (create as { parameters?: { name: string; in: string; required: boolean; schema: object }[] }).parameters?.find((p) => p.name === 'RT-Handle-Scope');
      expect(scope).to.include({ in: 'header', required: false });
      expect(ajv.validate(scope!.schema, 'f'.repeat(32))).to.equal(true);
      expect(ajv.validate(scope!.schema, 'short')).to.equal(false);
      // Only resources with a constructor are made this way.
      expect(paths()).to.have.property('/api/services/acme/cells/resources/a.cell');
      expect(paths()).not.to.have.property('/api/services/acme/cells/resources/b.cell');
    });

    it("calls a handle's method with the body of its parameters but self", () => {
      const add = paths()['/api/services/acme/counters/handles/{handle}/invoke/add'];
      expect(add.parameters!.map((p) => [p.name, p.in, p.required])).to.deep.equal([['handle', 'path', true]]);
      const schema = add.post.requestBody!.content['application/json'].schema;
      expect(ajv.validate(schema, { n: 2 })).to.equal(true);
      expect(ajv.validate(schema, { self: { $handle: 'h' }, n: 2 })).to.equal(false);
      expect(add.post.responses).to.include.keys('200', '404', '410', '503');
      expect(Object.keys(paths()).filter((p) => p.includes('/counters/handles/{handle}/invoke/')).map((p) => p.split('/').at(-1))).to.have.members(['add', 'value', 'fail']);
    });

    it('has one operation for a method name two resources share, taking either body and naming both', () => {
      const get = paths()['/api/services/acme/cells/handles/{handle}/invoke/get'].post;
      expect(get.description).to.include('a.cell or b.cell');
      const response = get.responses['200'].content!['application/json'].schema;
      expect(ajv.validate(response, { result: 7 })).to.equal(true);
      expect(ajv.validate(response, { result: 'seven' })).to.equal(true);
      expect(ajv.validate(response, { result: true })).to.equal(false);
      expect((response.anyOf as Schema[]).map((c) => c.title)).to.deep.equal(['a.cell.get', 'b.cell.get']);
      // Both take no arguments: one schema, not the same one twice.
      expect(get.requestBody!.content['application/json'].schema).to.deep.equal(resourceOf('a.cell').methods.find((m) => m.name === 'get')!.request_schema);
      const set = paths()['/api/services/acme/cells/handles/{handle}/invoke/set'].post;
      expect(ajv.validate(set.requestBody!.content['application/json'].schema, { v: 'x' })).to.equal(true);
    });

    it('drops a handle (204) and lists the live ones', () => {
      const drop = paths()['/api/services/acme/counters/handles/{handle}'].delete;
      expect(drop.responses).to.have.keys('204', '404', '410');
      const list = paths()['/api/services/acme/counters/handles'].get;
      const listSchema = list.responses['200'].content!['application/json'].schema;
      expect(listSchema.$ref).to.equal('#/components/schemas/Handles');
      const resolved = (document().components as { schemas: Record<string, Schema> }).schemas.Handles;
      const at = '2026-01-01T00:00:00.000Z';
      expect(ajv.validate(resolved, { handles: [{ handle: 'h1', resource: 'counter', worker: 1, created: at, last_used: at, expires: at }] })).to.equal(true);
      expect(ajv.validate(resolved, { handles: [{ handle: 'h1' }] })).to.equal(false);
    });
  });
});
