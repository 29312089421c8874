// What in a component uses the component model's async ABI (lib/wit/async-abi.ts),
// read from real component binaries, and the load error on a Node.js without
// JSPI (lib/platform.ts).

import { expect } from 'chai';
import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { hasJspi, platformNote, requireJspi } from '../../lib/platform.js';
import { asyncAbiUse } from '../../lib/wit/async-abi.js';
import { readComponentInterface } from '../../lib/wit/component-reader.js';
import { asyncAnswer } from '../support/async-components.js';

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
    expect(asyncAbiUse(readComponentInterface(await asyncAnswer()))).to.equal('its export `answer` is an async function');
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

  it(`on this Node.js (${process.versions.node}, JSPI ${hasJspi ? 'present' : 'absent'}) refuses such a component only without JSPI, naming the line it needs`, async () => {
    const use = asyncAbiUse(readComponentInterface(await asyncAnswer()));
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
