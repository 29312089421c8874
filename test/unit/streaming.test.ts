// Which functions are streaming methods (docs/api.md §5.1.1), and how their
// items are framed on the wire.

import { expect } from 'chai';
import { serviceExports } from '../../lib/primary/addressing.js';
import { framer, framingFor, sseError } from '../../lib/worker/execution/stream-framing.js';
import { streamMediaType, streamSignature, type StreamSignature } from '../../lib/wit/streaming.js';
import type { ComponentInterface, Param, TypeDefinition, WitFunction, WitType } from '../../lib/wit/types.js';
import { borrow as borrowOf, func, future, list, named, option, own as ownOf, prim, record, result, stream } from '../support/wit-types.js';

const bytes = list(prim('u8'));
const LOGS = 'acme:logs/logs@1.0.0';
// Handles to resources of the interface below, as the component reader gives them: with the resource's origin.
const own = (resource: string) => named({ interface: LOGS, name: resource }, ownOf(resource));
const borrow = (resource: string) => named({ interface: LOGS, name: resource }, borrowOf(resource));
const self = (resource: string): Param => ({ name: 'self', type: borrow(resource) });
const next = (resource: string, result: WitType | null, params = [self(resource)]): WitFunction => ({ name: `[method]${resource}.next`, params, result });
const returning = (name: string, resource: string): WitFunction => func(name, { n: prim('u32') }, own(resource));

/** `resource x;` for every resource the functions return, as an interface exporting them declares it. */
function resourcesOf(functions: WitFunction[]): TypeDefinition[] {
  const names = new Set(functions.flatMap((f) => (f.result?.kind === 'own' ? [f.result.resource] : [])));
  return [...names].map((name) => ({ name, type: { kind: 'resource' } }));
}

function component(functions: WitFunction[]): ComponentInterface {
  return {
    imports: [],
    functions: [],
    types: [],
    interfaces: [{ name: LOGS, interfaceName: 'logs', package: { namespace: 'acme', name: 'logs', version: '1.0.0' }, types: resourcesOf(functions), functions }],
  };
}

function signature(fn: WitFunction, others: WitFunction[]): StreamSignature | string | undefined {
  return streamSignature(component([fn, ...others]), fn);
}

describe('streaming methods', () => {
  describe('recognising them', () => {
    it('takes a resource whose next returns option<T>, with T encoded by its type', () => {
      expect(signature(returning('tail', 'lines'), [next('lines', option(prim('string')))])).to.deep.equal({
        source: 'next',
        resource: 'lines',
        item: prim('string'),
        error: null,
        fallible: false,
        encoding: 'text',
        nextExport: `${LOGS}#[method]lines.next`,
      });
      expect((signature(returning('raw', 'chunks'), [next('chunks', option(bytes))]) as StreamSignature).encoding).to.equal('bytes');
      expect((signature(returning('nums', 'n'), [next('n', option(prim('u64')))]) as StreamSignature).encoding).to.equal('ndjson');
    });

    it('names next as exported where the resource is, at world level too', () => {
      const world: ComponentInterface = { imports: [], functions: [returning('tail', 'lines'), next('lines', option(prim('string')))], types: [], interfaces: [] };
      expect(streamSignature(world, world.functions[0])).to.have.property('nextExport', '[method]lines.next');
      // The resource may live in another interface than the function returning it.
      const split = component([next('lines', option(prim('string')))]);
      const opener: ComponentInterface = { ...split, interfaces: [{ name: 'acme:logs/open@1.0.0', interfaceName: 'open', types: [], functions: [returning('tail', 'lines')] }, ...split.interfaces] };
      expect(streamSignature(opener, opener.interfaces[0].functions[0])).to.have.property('nextExport', `${LOGS}#[method]lines.next`);
    });

    it('takes next returning result<option<T>, E>, keeping E', () => {
      const fallible = next('lines', result(option(prim('string')), prim('u32')));
      expect(signature(returning('tail', 'lines'), [fallible])).to.include({ fallible: true }).and.to.have.deep.property('error', prim('u32'));
    });

    it('says why a returned resource is no stream', () => {
      expect(signature(returning('open', 'blob'), [])).to.match(/resource blob, which has no exported next method/);
      expect(signature(returning('open', 'blob'), [next('blob', prim('string'))])).to.match(/blob\.next returns no option<T>/);
      expect(signature(returning('open', 'blob'), [next('blob', option(prim('string')), [self('blob'), { name: 'n', type: prim('u32') }])])).to.match(/takes parameters/);
      expect(signature(returning('open', 'blob'), [next('blob', option(option(prim('u8'))))])).to.match(/option of an option/);
      expect(signature(returning('open', 'blob'), [next('blob', option(own('other')))])).to.match(/hold a resource handle/);
    });

    it('takes a stream<T> result (WASI 0.3): a stream<u8> as chunks of bytes, stream<string> as text, other T as NDJSON', () => {
      const async = (element: WitType | null) => signature({ ...func('s', {}, stream(element)), async: true }, []);
      expect(async(prim('u8'))).to.deep.equal({ source: 'stream', item: bytes, error: null, fallible: false, encoding: 'bytes' });
      expect(async(prim('string'))).to.include({ source: 'stream', encoding: 'text' });
      expect(async(record({ n: prim('u32') }))).to.include({ source: 'stream', encoding: 'ndjson' });
      expect(async(null)).to.match(/a stream without items/);
    });

    it('lists a stream<T> method invocable, and says why one whose items JSON cannot carry is not', () => {
      const methods = serviceExports(
        component([
          { ...func('ticks', { n: prim('u32') }, stream(prim('u64'))), async: true },
          { ...func('nested', {}, stream(future(prim('u32')))), async: true },
          { ...func('empty', {}, stream(null)), async: true },
          { ...func('handles', {}, stream(own('lines'))), async: true },
          next('lines', option(prim('string'))),
        ]),
      ).methods;
      const byName = new Map(methods.map((m) => [m.name, m]));
      expect(byName.get('ticks')).to.include({ invocable: true }).and.to.have.nested.property('stream.source', 'stream');
      expect(byName.get('nested')).to.include({ invocable: false, reason: 'the items of its stream hold a future, which JSON cannot carry' });
      expect(byName.get('handles')).to.include({ invocable: false }).and.to.have.property('reason').that.matches(/^the items of its stream hold a (resource )?handle/);
      expect(byName.get('empty')).to.include({ invocable: false, reason: 'it returns a stream without items (stream), which has nothing to answer with' });
    });

    it('leaves functions that return no owned resource alone', () => {
      expect(signature(func('f', {}, prim('string')), [])).to.equal(undefined);
      expect(signature(func('f', {}, null), [])).to.equal(undefined);
    });

    it('makes streaming methods invocable, and a function returning another resource one that returns a handle (§5.1.2)', () => {
      const methods = serviceExports(component([returning('tail', 'lines'), next('lines', option(prim('string'))), returning('open', 'blob')])).methods;
      const byName = new Map(methods.map((m) => [m.name, m]));
      expect(byName.get('tail')).to.include({ invocable: true }).and.to.have.nested.property('stream.resource', 'lines');
      expect(byName.get('tail')).to.not.have.property('handles');
      expect(byName.get('open')).to.include({ invocable: true }).and.to.not.have.property('stream');
      expect(byName.get('open')!.handles).to.deep.equal({ params: false, result: true });
      // A stream runs on an instance of its own: it cannot take handles, which live in the instance that made them.
      const taking = serviceExports(component([func('tail-of', { from: borrow('blob') }, own('lines')), next('lines', option(prim('string'))), returning('open', 'blob')])).methods;
      expect(taking.find((m) => m.name === 'tail-of')).to.include({ invocable: false, reason: 'a streaming method that takes handles is not supported yet (a stream runs on an instance of its own, and handles live in the instance that made them)' });
      // next is a method of the stream's resource: reached through a handle, never by a method name.
      expect(byName.get('next')).to.deep.include({ aliases: [], member: { kind: 'method', resource: 'lines', className: 'Lines' } });
    });
  });

  describe('media types', () => {
    it('are the sidecar\'s for bytes, UTF-8 text for strings, NDJSON for the rest', () => {
      expect(streamMediaType('bytes')).to.equal('application/octet-stream');
      expect(streamMediaType('bytes', 'video/mp2t')).to.equal('video/mp2t');
      expect(streamMediaType('text', 'ignored/for-text')).to.equal('text/plain; charset=utf-8');
      expect(streamMediaType('ndjson')).to.equal('application/x-ndjson');
    });
  });

  describe('framing', () => {
    const text = (b: Uint8Array | string) => (typeof b === 'string' ? b : new TextDecoder().decode(b));
    const stream = (item: WitType, encoding: StreamSignature['encoding']): StreamSignature => ({ source: 'next', resource: 'r', item, error: null, fallible: false, encoding, nextExport: '[method]r.next' });
    const entry = record({ 'seq-no': prim('u64'), text: prim('string') });

    it('writes bytes and text raw, and other items as NDJSON lines through the codec', () => {
      const raw = new Uint8Array([0, 1, 255]);
      expect(framer(stream(bytes, 'bytes'), 'raw')(raw)).to.equal(raw);
      expect(text(framer(stream(prim('string'), 'text'), 'raw')('héllo\n'))).to.equal('héllo\n');
      expect(text(framer(stream(entry, 'ndjson'), 'ndjson')({ seqNo: 2n ** 60n, text: 'a\nb' }))).to.equal('{"seq-no":"1152921504606846976","text":"a\\nb"}\n');
    });

    it('writes one SSE event per item, its data the item as JSON on one line', () => {
      expect(text(framer(stream(prim('string'), 'text'), 'sse')('two\nlines'))).to.equal('data: "two\\nlines"\n\n');
      expect(text(framer(stream(bytes, 'bytes'), 'sse')(new Uint8Array([1, 2, 3])))).to.equal('data: "AQID"\n\n');
      expect(text(sseError({ error: 'call timed out', details: 'x' }))).to.equal('event: error\ndata: {"error":"call timed out","details":"x"}\n\n');
    });

    it('answers SSE to clients that accept text/event-stream, the items\' encoding to the rest', () => {
      const s = stream(prim('string'), 'text');
      expect(framingFor(s, 'text/event-stream')).to.equal('sse');
      expect(framingFor(s, 'application/json, text/event-stream;q=0.5')).to.equal('sse');
      expect(framingFor(s, '*/*')).to.equal('raw');
      expect(framingFor(s, undefined)).to.equal('raw');
      expect(framingFor(stream(entry, 'ndjson'), undefined)).to.equal('ndjson');
    });
  });
});
