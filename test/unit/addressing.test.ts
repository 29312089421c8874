import { expect } from 'chai';
import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { AddressError, serviceAddress, serviceExports } from '../../lib/primary/addressing.js';
import { readComponentInterface } from '../../lib/wit/component-reader.js';
import { jsClassName, jsIdentifier } from '../../lib/wit/js-names.js';
import type { ComponentInterface, Param, WitFunction, WitInterface } from '../../lib/wit/types.js';
import { parseInterfaceName } from '../../lib/wit/types.js';
import { borrow as borrowOf, own, own as ownOf, prim } from '../support/wit-types.js';

const u32 = prim('u32');
const fn = (name: string, params: Param[] = [{ name: 'a', type: u32 }]): WitFunction => ({ name, params, result: u32 });

function iface(name: string, functions: WitFunction[]): WitInterface {
  const parsed = parseInterfaceName(name);
  const i: WitInterface = { name, interfaceName: parsed?.interfaceName ?? name, types: [], functions };
  if (parsed) i.package = parsed.package;
  return i;
}

function component(interfaces: WitInterface[], functions: WitFunction[] = []): ComponentInterface {
  return { imports: [], interfaces, functions, types: [] };
}

describe('addressing', () => {
  describe('serviceAddress', () => {
    it('takes domain and service from the one exported package, with its version', () => {
      const c = component([iface('acme:greeter/greeter@1.0.0', [fn('greet')]), iface('acme:greeter/admin@1.0.0', [fn('reset')])]);
      expect(serviceAddress(c, 'file-stem')).to.deep.equal({ id: { domain: 'acme', service: 'greeter' }, version: '1.0.0' });
    });

    it('falls back to default/<stem> for world-level functions only', () => {
      expect(serviceAddress(component([], [fn('add')]), 'calc')).to.deep.equal({ id: { domain: 'default', service: 'calc' } });
    });

    it('falls back to default/<stem> when interfaces of several packages are exported', () => {
      const c = component([iface('acme:a/x', [fn('f')]), iface('acme:b/y', [fn('g')])]);
      expect(serviceAddress(c, 'multi').id).to.deep.equal({ domain: 'default', service: 'multi' });
    });

    it('never takes the address from a standard wasi: package', () => {
      expect(serviceAddress(component([iface('wasi:cli/run@0.2.0', [fn('run')])]), 'tool')).to.deep.equal({ id: { domain: 'default', service: 'tool' } });
      const both = component([iface('wasi:http/incoming-handler@0.2.0', [fn('handle')]), iface('acme:web/admin@1.2.0', [fn('reset')])]);
      expect(serviceAddress(both, 'web')).to.deep.equal({ id: { domain: 'acme', service: 'web' }, version: '1.2.0' });
      expect(serviceAddress(component([iface('wasi:cli/run@0.2.0', [fn('run')])]), 'tool', { domain: 'ops' }).id).to.deep.equal({ domain: 'ops', service: 'tool' });
    });

    it('reads underscores in a file stem as dashes, as cargo names a crate’s component (my_component.wasm)', () => {
      const worldOnly = component([], [fn('run-async')]);
      expect(serviceAddress(worldOnly, 'async_call').id).to.deep.equal({ domain: 'default', service: 'async-call' });
      expect(serviceAddress(worldOnly, 'my_big_component').id).to.deep.equal({ domain: 'default', service: 'my-big-component' });
      expect(serviceAddress(component([iface('acme:greeter/greeter', [fn('greet')])]), 'greeter_v2').id).to.deep.equal({ domain: 'acme', service: 'greeter' });
    });

    it('lets the sidecar name domain and service', () => {
      const c = component([iface('acme:a/x', [fn('f')]), iface('acme:b/y', [fn('g')])]);
      expect(serviceAddress(c, 'multi', { domain: 'team', service: 'tools' }).id).to.deep.equal({ domain: 'team', service: 'tools' });
    });

    it('refuses a file name that is no service name when it would name the service, as it refuses such a name in a sidecar', () => {
      const worldOnly = component([], [fn('add')]);
      for (const stem of ['<img src=x>', 'a b', '_under', '-dash']) {
        expect(() => serviceAddress(worldOnly, stem), stem).to.throw(AddressError, `the file name ${JSON.stringify(stem)} is not a service name`);
      }
      expect(serviceAddress(worldOnly, '<img src=x>', { service: 'named' }).id).to.deep.equal({ domain: 'default', service: 'named' });
      expect(serviceAddress(component([iface('acme:greeter/greeter', [fn('greet')])]), 'a b').id).to.deep.equal({ domain: 'acme', service: 'greeter' });
    });
  });

  describe('serviceExports', () => {
    it('names methods exactly as in WIT, bare when unique and interface-qualified always', () => {
      const c = component([iface('acme:s/one@1.0.0', [fn('get-item'), fn('shared')]), iface('acme:s/two@1.0.0', [fn('shared')])], [fn('top')]);
      const methods = serviceExports(c).methods;
      expect(methods.map((m) => m.aliases)).to.deep.equal([['top'], ['get-item', 'one.get-item'], ['one.shared'], ['two.shared']]);
      expect(methods.map((m) => m.name)).to.deep.equal(['top', 'get-item', 'one.shared', 'two.shared']);
      expect(methods[1]).to.include({ exportKey: 'acme:s/one@1.0.0', jsName: 'getItem', invocable: true });
      expect(methods[0]).to.include({ exportKey: null, jsName: 'top' });
    });

    it('qualifies an interface exported in two versions (or by two packages) so that each method keeps a name', () => {
      const c = component([
        iface('test:dep/test@0.1.0', [fn('x')]),
        iface('test:dep/test@0.2.0', [fn('x')]),
        iface('acme:a/api', [fn('f')]),
        iface('acme:b/api', [fn('f')]),
      ]);
      expect(serviceExports(c).methods.map((m) => m.name)).to.deep.equal(['test@0.1.0.x', 'test@0.2.0.x', 'acme:a/api.f', 'acme:b/api.f']);
    });

    it('marks functions of, and taking handles to, a resource the component does not export as not invocable, with a reason', () => {
      const handle = own('blob');
      const c = component([iface('acme:r/api', [fn('[method]blob.read'), fn('open', [{ name: 'b', type: handle }])])]);
      const [method, open] = serviceExports(c).methods;
      expect(method).to.include({ invocable: false });
      expect(method.reason).to.equal('it belongs to blob, a resource the component does not export');
      expect(open.invocable).to.equal(false);
      expect(open.reason).to.include('"b"');
    });

    it('makes an exported resource\'s constructor, methods and statics invocable, and gives them to the resource', () => {
      const at = { interface: 'acme:r/api', name: 'blob' };
      const own = (r: string) => ({ ...ownOf(r), origin: at });
      const borrow = (r: string) => ({ ...borrowOf(r), origin: at });
      const api = iface('acme:r/api', [
        { name: '[constructor]blob', params: [], result: own('blob') },
        { name: '[method]blob.read', params: [{ name: 'self', type: borrow('blob') }], result: { kind: 'primitive', name: 'u32' } },
        { name: '[static]blob.join', params: [{ name: 'a', type: borrow('blob') }, { name: 'b', type: own('blob') }], result: own('blob') },
      ]);
      api.types = [{ name: 'blob', type: { kind: 'resource', origin: at } }];
      const { methods, resources } = serviceExports(component([api]));
      expect(methods.map((m) => [m.name, m.aliases, m.invocable])).to.deep.equal([
        ['blob', [], true],
        ['read', [], true],
        ['blob.join', ['blob.join', 'api.blob.join'], true],
      ]);
      expect(resources).to.have.length(1);
      expect(resources[0]).to.include({ name: 'blob', constructorMethod: 0 });
      expect(resources[0]).to.deep.include({ methods: [1], statics: [2] });
      expect(methods[2].handles).to.deep.equal({ params: true, result: true });
      expect(methods[1].member).to.deep.equal({ kind: 'method', resource: 'blob', className: 'Blob' });
    });
  });

  it('takes a resource an exported interface uses from an import for the host\'s: functions holding it are not invocable', () => {
    const hostFile = { interface: 'acme:files/host@1.0.0', name: 'file' };
    const api = iface('acme:files/api@1.0.0', [{ name: 'open', params: [], result: { ...own('file'), origin: hostFile } }, fn('count', [])]);
    api.types = [{ name: 'file', type: { kind: 'resource', origin: hostFile } }];
    const { methods, resources } = serviceExports(component([api]));
    expect(resources).to.deep.equal([]);
    expect(methods.find((m) => m.name === 'open')).to.include({ invocable: false });
    expect(methods.find((m) => m.name === 'open')!.reason).to.include('a resource the component imports');
    expect(methods.find((m) => m.name === 'count')).to.include({ invocable: true });
  });

  it('tells an exported resource from an imported one of the same interface and name by the type each function declares', async () => {
    // wit-bindgen's resource-import-and-export and resource_alias_redux: the world imports and exports
    // `test`; a world-level function's `thing` is the imported one (a world's `use` imports), the
    // exported interface's is the component's own. Both are `test#thing` by name.
    const wit = `package acme:both;
      interface test {
        resource thing {
          constructor(v: u32);
          foo: func() -> u32;
          baz: static func(a: thing, b: thing) -> thing;
        }
        all: func(things: list<thing>) -> u32;
      }
      world w {
        import test;
        export test;
        use test.{thing};
        export toplevel-export: func(a: thing) -> thing;
        export toplevel-count: func(things: list<borrow<thing>>) -> u32;
        export plain: func() -> u32;
      }`;
    const c = readComponentInterface(await componentNew(await componentEmbed({ dummy: true, witSource: wit, world: 'w' }), []));
    const { methods, resources } = serviceExports(c);
    const verdicts = Object.fromEntries(methods.map((m) => [m.function.name, m.reason ?? 'invocable']));
    expect(verdicts).to.deep.equal({
      'toplevel-export': 'parameter "a" holds a handle to thing, a resource the component imports (rt makes no such handles)',
      'toplevel-count': 'parameter "things" holds a handle to thing, a resource the component imports (rt makes no such handles)',
      plain: 'invocable',
      '[constructor]thing': 'invocable',
      '[method]thing.foo': 'invocable',
      '[static]thing.baz': 'invocable',
      all: 'invocable',
    });
    expect(resources.map((r) => r.name)).to.deep.equal(['thing']);
  });

  it('jsIdentifier lower-camel-cases kebab-case names as jco does', () => {
    expect(jsIdentifier('echo-bytes')).to.equal('echoBytes');
    expect(jsIdentifier('f32-to-u8')).to.equal('f32ToU8');
    expect(jsIdentifier('add')).to.equal('add');
    expect(jsIdentifier('get-HTTP-url')).to.equal('getHttpUrl');
    expect(jsClassName('input-stream')).to.equal('InputStream');
  });
});
