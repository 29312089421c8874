// Links as the catalog settles them (lib/primary/service-links.ts): a
// sidecar's [imports] name interfaces the component imports; a link holds
// when its target is served and exports the interface with the same types,
// whose values can cross (streams and futures only where the importer's task
// can wait on them); a cycle fails every service on it; a service whose
// target was refused is refused in turn. Each error names both sides.

import { expect } from 'chai';
import { settleLinks, sidecarLinks } from '../../lib/primary/service-links.js';
import { SidecarError } from '../../lib/primary/sidecar.js';
import type { LoadFailure, ServiceDescriptor, ServiceLink } from '../../lib/service.js';
import type { ComponentInterface, WitFunction, WitType } from '../../lib/wit/types.js';

const u32: WitType = { kind: 'primitive', name: 'u32' };
const str: WitType = { kind: 'primitive', name: 'string' };
const add: WitFunction = { name: 'add', params: [{ name: 'a', type: u32 }, { name: 'b', type: u32 }], result: u32 };
const MATH = 'acme:calc/math@1.0.0';

interface Parts {
  imports?: { name: string; functions: WitFunction[] }[];
  exports?: { name: string; functions: WitFunction[] }[];
  links?: [iface: string, target: string][];
  handler?: '0.2' | '0.3';
}

/** A descriptor with what settleLinks reads: its address, interface, handler and links. */
function service(name: string, { imports = [], exports = [], links = [], handler }: Parts): ServiceDescriptor {
  const iface: ComponentInterface = {
    imports: imports.map((i) => ({ name: i.name, kind: 'instance', functions: i.functions, types: [] })),
    interfaces: exports.map((e) => ({ name: e.name, interfaceName: e.name.split('/')[1].split('@')[0], types: [], functions: e.functions })),
    functions: [],
    types: [],
  };
  const http = handler && { interface: `wasi:http/${handler === '0.3' ? 'handler@0.3.0' : 'incoming-handler@0.2.3'}`, version: handler === '0.3' ? '0.3.0' : '0.2.3', wasi: handler, route: null };
  const serviceLinks: ServiceLink[] = links.map(([i, target]) => ({ interface: i, target: { domain: target.split('/')[0], service: target.split('/')[1] } }));
  const partial: Partial<ServiceDescriptor> = { id: { domain: 'acme', service: name }, source: `/repo/${name}.wasm`, interface: iface, http: http ?? null, links: serviceLinks };
  return partial as ServiceDescriptor;
}

function settle(services: ServiceDescriptor[]): { serving: string[]; failures: LoadFailure[] } {
  const failures: LoadFailure[] = [];
  return { serving: settleLinks(services, failures).map((s) => s.id.service), failures };
}

describe('service links', () => {
  it('keeps a link whose target exports the interface with the same types, whatever names those types were exported under', () => {
    const named: WitFunction = { ...add, params: add.params.map((p) => ({ ...p, type: { ...u32, origin: { interface: MATH, name: 'number' } } })) };
    const { serving, failures } = settle([service('front', { imports: [{ name: MATH, functions: [add] }], links: [[MATH, 'acme/calc']] }), service('calc', { exports: [{ name: 'acme:calc/math@1.2.0', functions: [named] }] })]);
    expect(failures).to.deep.equal([]);
    expect(serving).to.deep.equal(['front', 'calc']);
  });

  it('fails a link to a service that is not served, that does not export the interface, or exports it with other types, naming both sides', () => {
    const imports = [{ name: MATH, functions: [add] }];
    const { serving, failures } = settle([
      service('lost', { imports, links: [[MATH, 'acme/nowhere']] }),
      service('wrong', { imports, links: [[MATH, 'acme/other']] }),
      service('other', { exports: [{ name: 'acme:calc/other@1.0.0', functions: [add] }] }),
      service('typed', { imports, links: [[MATH, 'acme/wide']] }),
      service('wide', { exports: [{ name: MATH, functions: [{ ...add, result: { kind: 'primitive', name: 'u64' } }] }] }),
      service('missing', { imports, links: [[MATH, 'acme/empty']] }),
      service('empty', { exports: [{ name: MATH, functions: [] }] }),
      service('older', { imports, links: [[MATH, 'acme/v2']] }),
      service('v2', { exports: [{ name: 'acme:calc/math@2.0.0', functions: [add] }] }),
    ]);
    expect(serving).to.deep.equal(['other', 'wide', 'empty', 'v2']);
    expect(failures).to.deep.equal([
      { source: '/repo/lost.wasm', error: `acme.lost imports ${MATH} from acme/nowhere ([imports]): no service acme/nowhere is served (no component has that address, or it failed to load)` },
      { source: '/repo/wrong.wasm', error: `acme.wrong imports ${MATH} from acme/other ([imports]): acme/other (/repo/other.wasm) does not export ${MATH}` },
      { source: '/repo/typed.wasm', error: `acme.typed imports ${MATH} from acme/wide ([imports]): acme/wide's add is func(a: u32, b: u32) -> u64, the import's is func(a: u32, b: u32) -> u32` },
      { source: '/repo/missing.wasm', error: `acme.missing imports ${MATH} from acme/empty ([imports]): acme/empty (/repo/empty.wasm) has no function add in ${MATH}` },
      // Another major version is another interface, as for WASI's lines.
      { source: '/repo/older.wasm', error: `acme.older imports ${MATH} from acme/v2 ([imports]): acme/v2 (/repo/v2.wasm) does not export ${MATH}` },
    ]);
  });

  it('links async functions that pass a stream or a future of values as a parameter or the result itself', () => {
    const chat: WitFunction = { name: 'chat', params: [{ name: 'input', type: { kind: 'stream', element: str } }, { name: 'seed', type: { kind: 'future', element: u32 } }], result: { kind: 'stream', element: u32 }, async: true };
    const later: WitFunction = { name: 'later', params: [], result: { kind: 'future', element: null }, async: true };
    const { serving, failures } = settle([service('front', { imports: [{ name: MATH, functions: [chat, later] }], links: [[MATH, 'acme/calc']] }), service('calc', { exports: [{ name: MATH, functions: [chat, later] }] })]);
    expect(failures).to.deep.equal([]);
    expect(serving).to.deep.equal(['front', 'calc']);
  });

  it('fails a link whose functions pass a resource, a stream inside another type, two streams, or a stream in a sync function, saying which', () => {
    const bytes: WitType = { kind: 'stream', element: { kind: 'primitive', name: 'u8' } };
    const cases: [WitFunction, string][] = [
      [{ name: 'take', params: [{ name: 'r', type: { kind: 'own', resource: 'blob' } }], result: null }, 'take passes blob: a link carries values, and streams and futures of values as a parameter or the result itself (no resources, nor a stream or future inside another type)'],
      [{ name: 'wrapped', params: [], result: { kind: 'option', inner: bytes }, async: true }, 'wrapped passes option<stream<u8>>: a link carries values, and streams and futures of values as a parameter or the result itself (no resources, nor a stream or future inside another type)'],
      [{ name: 'handles', params: [], result: { kind: 'stream', element: { kind: 'own', resource: 'blob' } }, async: true }, 'handles passes stream<blob>: a link carries values, and streams and futures of values as a parameter or the result itself (no resources, nor a stream or future inside another type)'],
      [{ name: 'pair', params: [{ name: 'a', type: bytes }, { name: 'b', type: bytes }], result: u32, async: true }, 'pair takes more than one stream: a link carries one stream parameter'],
      [{ name: 'blocking', params: [{ name: 'data', type: bytes }], result: u32 }, 'blocking passes stream<u8> but is not async: a stream or future crosses a link only in an async func (the caller\'s task waits while it is read and written)'],
    ];
    for (const [fn, why] of cases) {
      const { serving, failures } = settle([service('front', { imports: [{ name: MATH, functions: [fn] }], links: [[MATH, 'acme/calc']] }), service('calc', { exports: [{ name: MATH, functions: [fn] }] })]);
      expect(serving, fn.name).to.deep.equal(['calc']);
      expect(failures[0].error).to.equal(`acme.front imports ${MATH} from acme/calc ([imports]): ${why}`);
    }
  });

  it("links a middleware's wasi:http/handler only to a WASI 0.3 handler service", () => {
    const handler = 'wasi:http/handler@0.3.0';
    const { serving, failures } = settle([
      service('mw', { imports: [{ name: handler, functions: [] }], links: [[handler, 'acme/web']], handler: '0.3' }),
      service('web', { handler: '0.3' }),
      service('mw-old', { imports: [{ name: handler, functions: [] }], links: [[handler, 'acme/old']], handler: '0.3' }),
      service('old', { handler: '0.2' }),
    ]);
    expect(serving).to.deep.equal(['mw', 'web', 'old']);
    expect(failures).to.deep.equal([{ source: '/repo/mw-old.wasm', error: `acme.mw-old imports ${handler} from acme/old ([imports]): acme/old (/repo/old.wasm) is no wasi:http/handler@0.3.x handler` }]);
  });

  it('fails every service on a link cycle, and then one that links to any of them, instead of letting a call wait on itself', () => {
    const handler = 'wasi:http/handler@0.3.0';
    const mw = (name: string, target: string) => service(name, { imports: [{ name: handler, functions: [] }], links: [[handler, `acme/${target}`]], handler: '0.3' });
    const { serving, failures } = settle([mw('a', 'b'), mw('b', 'a'), mw('c', 'a'), mw('self', 'self'), mw('d', 'web'), service('web', { handler: '0.3' })]);
    expect(serving).to.deep.equal(['d', 'web']);
    expect(failures.map((f) => f.error)).to.deep.equal([
      'its [imports] make a link cycle: acme.a → acme.b → acme.a (a call across it would wait on itself)',
      'its [imports] make a link cycle: acme.b → acme.a → acme.b (a call across it would wait on itself)',
      'its [imports] make a link cycle: acme.self → acme.self (a call across it would wait on itself)',
      `acme.c imports ${handler} from acme/a ([imports]): no service acme/a is served (no component has that address, or it failed to load)`,
    ]);
  });

  it("reads a sidecar's [imports] against the component's imports, with or without a version; an interface it does not import is the sidecar's error", () => {
    const iface: ComponentInterface = { imports: [{ name: MATH, kind: 'instance', functions: [add], types: [] }], interfaces: [], functions: [], types: [] };
    expect(sidecarLinks(iface, { 'acme:calc/math': 'acme/calc' }, '/repo/front.toml')).to.deep.equal([{ interface: MATH, target: { domain: 'acme', service: 'calc' } }]);
    expect(sidecarLinks(iface, { 'acme:calc/math@1.4.0': 'acme/calc' }, '/repo/front.toml')).to.have.length(1);
    for (const name of ['acme:calc/other', 'acme:calc/math@2.0.0']) {
      expect(() => sidecarLinks(iface, { [name]: 'acme/calc' }, '/repo/front.toml'), name).to.throw(SidecarError, `/repo/front.toml: imports.${name}: the component imports no interface ${name}`);
    }
  });
});
