// What in a component uses the component model's async ABI (lib/wit/async-abi.ts),
// read from real component binaries, and the load error on a Node.js without
// JSPI (lib/platform.ts).

import { expect } from 'chai';
import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { hasJspi, platformNote, requireJspi } from '../../lib/platform.js';
import { serviceExports } from '../../lib/primary/addressing.js';
import { answersLater, asInvoked, asyncAbiUse, bodyStreamItems, bodyStreamParam, futureParams } from '../../lib/wit/async-abi.js';
import { readComponentInterface } from '../../lib/wit/component-reader.js';
import { asyncCalls } from '../support/async-components.js';
import { prim } from '../support/wit-types.js';

async function dummy(wit: string, world: string): Promise<Uint8Array> {
  return componentNew(await componentEmbed({ dummy: true, witSource: wit, world }), []);
}

describe('the async ABI in a component', function () {
  this.timeout(30_000);

  it('finds nothing in a component of plain functions, records, lists and resources', async () => {
    const bytes = await dummy(
      `package acme:plain@1.0.0;
interface api { record r { a: list<u8> } resource blob { constructor(); read: func() -> r; } get: func(x: option<r>) -> result<r, string>; }
world plain { export api; }`,
      'plain',
    );
    expect(asyncAbiUse(readComponentInterface(bytes))).to.equal(undefined);
  });

  it('names a world-level function lifted async', async () => {
    expect(asyncAbiUse(readComponentInterface(await asyncCalls()))).to.equal('its export `answer` is an async function');
  });

  it('names an exported function declared `async func` in an interface', async () => {
    const bytes = await dummy('package acme:p3@1.0.0;\ninterface api { plain: func(); chat: async func(s: string) -> string; }\nworld p3 { export api; }', 'p3');
    expect(asyncAbiUse(readComponentInterface(bytes))).to.equal('its export `acme:p3/api@1.0.0#chat` is an async function');
  });

  it('names a stream or a future anywhere in a parameter or a result, of an export or an import', async () => {
    const streamed = await dummy('package acme:s@1.0.0;\ninterface api { record page { parts: list<option<stream<u8>>> } read: func() -> page; }\nworld s { export api; }', 's');
    expect(asyncAbiUse(readComponentInterface(streamed))).to.equal('its export `acme:s/api@1.0.0#read` takes or returns a stream');
    const imported = await dummy('package acme:f@1.0.0;\ninterface host { later: func(x: u32) -> result<future<u32>, string>; }\nworld f { import host; export run: func(); }', 'f');
    expect(asyncAbiUse(readComponentInterface(imported))).to.equal('its import `acme:f/host@1.0.0#later` takes or returns a future');
  });

  it('makes async functions methods like any other, but not yet an async function of a resource, saying why', async () => {
    const bytes = await dummy('package acme:p3@1.0.0;\ninterface api { resource session { constructor(); ask: async func(q: string) -> string; } chat: async func(s: string) -> string; }\nworld p3 { export api; }', 'p3');
    const methods = serviceExports(readComponentInterface(bytes)).methods;
    expect(methods.find((m) => m.name === 'chat')).to.include({ invocable: true });
    expect(methods.find((m) => m.function.name === '[method]session.ask')).to.include({ invocable: false, reason: 'an async function of a resource: rt does not call those yet' });
  });

  it('answers a future<T> result as T, and a stream<T> result item by item; a future inside a result stays not invocable, saying why', async () => {
    const bytes = await dummy('package acme:f@1.0.0;\ninterface api { later: func() -> future<u32>; nested: func() -> result<future<u32>, string>; flow: async func() -> stream<u8>; }\nworld f { export api; }', 'f');
    const methods = serviceExports(readComponentInterface(bytes)).methods;
    const later = methods.find((m) => m.name === 'later')!;
    expect(later).to.include({ invocable: true });
    expect(later.handles, 'a future result is no handle').to.equal(undefined);
    expect(answersLater(later.function)).to.equal(true);
    expect(asInvoked(later.function).result).to.deep.equal({ kind: 'primitive', name: 'u32' });
    expect(methods.find((m) => m.name === 'nested')).to.include({ invocable: false, reason: 'the result holds a future, which JSON cannot carry' });
    expect(methods.find((m) => m.name === 'flow')).to.include({ invocable: true }).and.to.have.nested.property('stream.encoding', 'bytes');
  });

  it('takes a future<T> parameter written as T (a handle-free call that answers later); a future without a value, or one inside another type, stays not invocable, saying why', async () => {
    const bytes = await dummy('package acme:g@1.0.0;\ninterface api { take: async func(v: future<u32>, n: u8) -> u32; none: func(v: future) -> u32; deep: func(v: list<future<u32>>) -> u32; }\nworld g { export api; }', 'g');
    const methods = serviceExports(readComponentInterface(bytes)).methods;
    const take = methods.find((m) => m.name === 'take')!;
    expect(take).to.include({ invocable: true });
    expect(take.handles, 'a future parameter is no handle').to.equal(undefined);
    expect(futureParams(take.function)).to.deep.equal([0]);
    expect(asInvoked(take.function).params.map((p) => p.type)).to.deep.equal([prim('u32'), prim('u8')]);
    expect(answersLater({ ...take.function, async: false })).to.equal(true);
    expect(methods.find((m) => m.name === 'none')).to.include({ invocable: false, reason: 'parameter "v" is a future without a value, which rt cannot write yet' });
    expect(methods.find((m) => m.name === 'deep')).to.include({ invocable: false, reason: 'parameter "v" holds a future, which JSON cannot carry' });
  });

  it('reads a stream<T> parameter from the request body (a stream<u8> raw, other items as NDJSON), leaving it out of the JSON arguments; two streams, one inside another type, one of handles or without items, or one beside handles stay not invocable, saying why', async () => {
    const bytes = await dummy(
      `package acme:s@1.0.0;
interface api {
  resource r { constructor(); }
  put: func(key: string, data: stream<u8>, at: future<u32>) -> u32;
  two: async func(a: stream<u8>, b: stream<u8>);
  nums: async func(n: stream<u32>);
  points: async func(p: stream<tuple<u32, string>>) -> u32;
  handles: async func(h: stream<own<r>>);
  bare: async func(s: stream);
  deep: async func(n: list<stream<u8>>);
  owned: async func(data: stream<u8>, x: borrow<r>);
  upper: async func(data: stream<u8>) -> stream<u8>;
}
world s { export api; }`,
      's',
    );
    const methods = serviceExports(readComponentInterface(bytes)).methods;
    const put = methods.find((m) => m.name === 'put')!;
    expect(put).to.include({ invocable: true });
    expect(bodyStreamParam(put.function)).to.equal(1);
    expect(asInvoked(put.function).params.map((p) => [p.name, p.type])).to.deep.equal([['key', prim('string')], ['at', prim('u32')]]);
    expect(futureParams(put.function), 'positions in the whole list, where the stream goes back').to.deep.equal([2]);
    expect(answersLater(put.function), 'a plain func that takes a stream').to.equal(true);
    const upper = methods.find((m) => m.name === 'upper')!;
    expect(upper, 'full duplex: a stream in, a stream out').to.include({ invocable: true });
    expect(upper.stream).to.include({ source: 'stream', encoding: 'bytes' });
    expect(methods.find((m) => m.name === 'two')).to.include({ invocable: false, reason: 'it takes 2 stream parameters ("a", "b"): rt reads one, from the request body' });
    expect(bodyStreamItems(put.function)).to.deep.equal({ at: 1, kind: 'bytes', mediaType: 'application/octet-stream' });
    for (const name of ['nums', 'points']) {
      const method = methods.find((m) => m.name === name)!;
      expect(method, name).to.include({ invocable: true });
      expect(bodyStreamItems(method.function), name).to.deep.include({ kind: 'items', mediaType: 'application/x-ndjson' });
    }
    expect(bodyStreamItems(methods.find((m) => m.name === 'points')!.function)).to.have.nested.property('element.kind', 'tuple');
    expect(methods.find((m) => m.name === 'handles')).to.include({ invocable: false, reason: 'parameter "h" is a stream whose items hold handles, which rt does not read from a request body yet' });
    expect(methods.find((m) => m.name === 'bare')).to.include({ invocable: false, reason: 'parameter "s" is a stream without items, which rt cannot read from a request body' });
    expect(methods.find((m) => m.name === 'deep')).to.include({ invocable: false, reason: 'parameter "n" holds a stream, which JSON cannot carry' });
    expect(methods.find((m) => m.name === 'owned')).to.include({ invocable: false, reason: 'a method that reads a stream parameter and takes or makes handles is not supported yet (the body it reads cannot follow a call to the worker that holds them)' });
  });

  it(`on this Node.js (${process.versions.node}, JSPI ${hasJspi ? 'present' : 'absent'}) refuses such a component only without JSPI, naming the line it needs`, async () => {
    const use = asyncAbiUse(readComponentInterface(await asyncCalls()));
    expect(() => requireJspi(undefined)).not.to.throw();
    if (hasJspi) {
      expect(() => requireJspi(use)).not.to.throw();
      expect(platformNote()).to.equal(undefined);
    } else {
      expect(() => requireJspi(use)).to.throw(`the component uses WASI 0.3 (component-model async: its export \`answer\` is an async function), which needs JSPI (WebAssembly.Suspending): Node.js 24 or later; this is Node.js ${process.versions.node}`);
      expect(platformNote()).to.include('has no JSPI (WebAssembly.Suspending)');
    }
  });

  it('JSPI is there on Node 24 and later, and on no Node 22', () => {
    const major = Number(process.versions.node.split('.')[0]);
    expect(hasJspi).to.equal(major >= 24);
  });
});
