// HTTP handler components (docs/api.md §5.8): which components are handlers,
// which paths a sidecar may mount one at, and which mount a request reaches.
// Components are built from WIT by wasm-tools, as the reader's tests build them.

import { componentEmbed, componentNew } from '@bytecodealliance/jco-transpile/wasm-tools';
import { expect } from 'chai';
import { serviceExports } from '../../lib/primary/addressing.js';
import { isMountPath, mountFor, normalPath, reservedBy } from '../../lib/http-mounts.js';
import { readComponentInterface } from '../../lib/wit/component-reader.js';
import { httpHandlerExport } from '../../lib/wit/http-handler.js';
import type { ComponentInterface } from '../../lib/wit/types.js';

/** A component exporting wasi:http's incoming handler at `version` (and `extra` in its world), its types as wasi:http declares them. */
async function handlerComponent(version: string, extra = ''): Promise<ComponentInterface> {
  const wit = `package acme:site@1.0.0;
    package wasi:http@${version} {
      interface types { resource incoming-request; resource response-outparam; }
      interface incoming-handler {
        use types.{incoming-request, response-outparam};
        handle: func(request: incoming-request, response-out: response-outparam);
      }
    }
    world site { export wasi:http/incoming-handler@${version}; ${extra} }`;
  const embedded = await componentEmbed({ dummy: true, witSource: wit, world: 'site' });
  return readComponentInterface(await componentNew(embedded, []));
}

describe('HTTP handler components', function () {
  this.timeout(30_000);

  describe('which components are handlers', () => {
    it('takes wasi:http/incoming-handler@0.2.x, of any patch version, apart from the methods', async () => {
      for (const version of ['0.2.3', '0.2.10']) {
        const iface = await handlerComponent(version, 'export version: func() -> string;');
        expect(httpHandlerExport(iface)).to.deep.equal({ interface: `wasi:http/incoming-handler@${version}`, version, wasi: '0.2' });
        const exports = serviceExports(iface);
        expect(exports.http).to.deep.equal({ interface: `wasi:http/incoming-handler@${version}`, version, wasi: '0.2' });
        expect(exports.methods.map((m) => m.name), 'handle is served over /http, not invoked').to.deep.equal(['version']);
      }
    });

    it('leaves another version among the methods, not invocable, and says which versions rt serves', async () => {
      const iface = await handlerComponent('0.3.0');
      expect(httpHandlerExport(iface)).to.deep.equal({ unsupported: 'it exports wasi:http/incoming-handler@0.3.0; rt serves wasi:http/incoming-handler@0.2.x and wasi:http/handler@0.3.x' });
      const exports = serviceExports(iface);
      expect(exports.http).to.equal(undefined);
      expect(exports.methods.map((m) => [m.name, m.invocable])).to.deep.equal([['handle', false]]);
    });

    it('finds none in a component without one', async () => {
      const embedded = await componentEmbed({ dummy: true, witSource: 'package acme:x@1.0.0;\nworld w { export f: func() -> u32; }', world: 'w' });
      const iface = readComponentInterface(await componentNew(embedded, []));
      expect(httpHandlerExport(iface)).to.equal(undefined);
      expect(serviceExports(iface).http).to.equal(undefined);
    });
  });

  describe('mounts', () => {
    it('take absolute paths of one or more segments, without dot segments or a trailing slash', () => {
      for (const ok of ['/hello', '/a/b-c/d_e.txt', '/v1:beta', '/%E2%9C%93']) expect(isMountPath(ok), ok).to.equal(true);
      for (const bad of ['', '/', 'hello', '/hello/', '//x', '/a//b', '/./x', '/a/..', '/a b', '/a?b', '/a#b', '/a\\b']) expect(isMountPath(bad), bad).to.equal(false);
    });

    it('may not claim rt\'s API or the console, or anything below them, in any case', () => {
      expect(reservedBy('/api')).to.include({ path: '/api' });
      expect(reservedBy('/API/services')).to.include({ owner: "rt's API" });
      expect(reservedBy('/console/x')).to.include({ owner: 'the console' });
      expect(reservedBy('/apis')).to.equal(undefined);
      expect(reservedBy('/consoles')).to.equal(undefined);
    });

    it('are claimed and matched on the normalised path: unreserved escapes decoded, ; parameters and dot segments gone', () => {
      expect(normalPath('/%61pi')).to.equal('/api');
      expect(normalPath('/api;x/services')).to.equal('/api/services');
      expect(normalPath('/cons%6fle')).to.equal('/console');
      expect(normalPath('/hello/./echo')).to.equal('/hello/echo');
      expect(normalPath('/a/b/../c')).to.equal('/a/c');
      expect(normalPath('/../../x')).to.equal('/x');
      expect(normalPath('/a/.')).to.equal('/a/');
      expect(normalPath('/%2e%2E/api')).to.equal('/api');
      // Escapes of other characters stay escapes, their hex in upper case: %2F is not a segment boundary.
      expect(normalPath('/a%2fb/%e2%9c%93')).to.equal('/a%2Fb/%E2%9C%93');
      for (const disguised of ['/%61pi', '/api;x', '/cons%6fle', '/x/../api', '/%2e%2e/console/y']) expect(reservedBy(disguised), disguised).to.not.equal(undefined);
      const mounts = new Map([['/hello', 'hello']]);
      for (const spelled of ['/hello/./echo', '/%68ello/echo', '/hello;v=1/echo', '/x/../hello/echo']) expect(mountFor(mounts, spelled), spelled).to.deep.equal({ route: '/hello', mounted: 'hello' });
    });

    it('are reached by the longest route a path is at or below, at a segment boundary', () => {
      const mounts = new Map([
        ['/shop', 'shop'],
        ['/shop/admin', 'admin'],
        ['/s', 's'],
      ]);
      expect(mountFor(mounts, '/shop')).to.deep.equal({ route: '/shop', mounted: 'shop' });
      expect(mountFor(mounts, '/shop/cart')).to.deep.equal({ route: '/shop', mounted: 'shop' });
      expect(mountFor(mounts, '/shop/admin/users')).to.deep.equal({ route: '/shop/admin', mounted: 'admin' });
      expect(mountFor(mounts, '/shopping'), 'not a segment boundary').to.equal(undefined);
      expect(mountFor(mounts, '/s/x')).to.deep.equal({ route: '/s', mounted: 's' });
      expect(mountFor(mounts, '/other')).to.equal(undefined);
    });
  });
});
