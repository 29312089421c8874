// A call's arguments from its request's input (lib/worker/execution/arguments.ts):
// small JSON bodies decoded where they arrive, large ones left as bytes for
// the instance thread, which decodes them with the same function
// (lib/wit/decode-json.ts), so both give the same arguments and the same 400s.

import { expect } from 'chai';
import { functionCodec } from '../../lib/wit/codec.js';
import { decodeJson } from '../../lib/wit/decode-json.js';
import { alone, callArguments, MAIN_THREAD_JSON_BYTES } from '../../lib/worker/execution/arguments.js';
import type { Failure } from '../../lib/worker/execution/invocation.js';
import { failureError } from '../../lib/worker/http/failures.js';
import { func, list, prim } from '../support/wit-types.js';

const lists = func('lists', { x: list(list(prim('u32'))) }, null);
const codec = functionCodec(lists);
const bytes = (text: string) => new TextEncoder().encode(text);
const where = { service: 'acme.nested', method: 'lists' };

describe('call arguments', () => {
  it('decodes a small JSON body where it arrived, to the arguments the codec gives', () => {
    const decoded = callArguments(codec, { kind: 'json', bytes: bytes('{"x": [[1, 2], []]}') });
    if (decoded.kind !== 'arguments') expect.fail(`decoded as ${decoded.kind}`);
    const [x] = decoded.args as [Uint32Array[]];
    expect(x.map((l) => [...l])).to.deep.equal([[1, 2], []]);
  });

  it('leaves a JSON body over MAIN_THREAD_JSON_BYTES as its bytes, for the instance thread', () => {
    const body = bytes(`{"x": [${new Array(MAIN_THREAD_JSON_BYTES / 4).fill('[1]').join(',')}]}`);
    expect(body.byteLength).to.be.above(MAIN_THREAD_JSON_BYTES);
    expect(callArguments(codec, { kind: 'json', bytes: body })).to.deep.equal({ kind: 'large-json', bytes: body });
    // At the bound, still decoded here: the rule is "larger than".
    const padded = bytes(`{"x": []}${' '.repeat(MAIN_THREAD_JSON_BYTES - 9)}`);
    expect(padded.byteLength).to.equal(MAIN_THREAD_JSON_BYTES);
    expect(callArguments(codec, { kind: 'json', bytes: padded }).kind).to.equal('arguments');
  });

  it('takes no body as no arguments, and raw bytes as the only list<u8> argument', () => {
    const none = functionCodec(func('n', {}, null));
    expect(callArguments(none, { kind: 'none' })).to.deep.equal({ kind: 'arguments', args: [] });
    const raw = functionCodec(func('r', { data: list(prim('u8')) }, null));
    const decoded = callArguments(raw, { kind: 'bytes', bytes: bytes('abc') });
    if (decoded.kind !== 'arguments') expect.fail(`decoded as ${decoded.kind}`);
    expect([...(decoded.args[0] as Uint8Array)]).to.deep.equal([97, 98, 99]);
  });

  it('a body that is not JSON: 400 invalid JSON, with the parser\'s complaint, wherever it is decoded', () => {
    const problem = decodeJson(codec, bytes('{"x": [[1, 2], ['));
    expect(problem.kind).to.equal('invalid-json');
    expect(callArguments(codec, { kind: 'json', bytes: bytes('{"x": [[1, 2], [') })).to.deep.equal(problem);
    const error = failureError(problem as Failure, where);
    expect([error.status, error.code]).to.deep.equal([400, 'RT_ERR_INVALID_JSON']);
    expect(error.details).to.be.a('string').with.length.above(0);
  });

  it('a body that does not fit the signature: 400 invalid arguments, naming the path', () => {
    const problem = decodeJson(codec, bytes('{"x": [[1], [2, -3]]}'));
    expect(problem).to.deep.equal({ kind: 'invalid-arguments', details: 'x[1][1]: expected u32 (0..4294967295), got -3' });
    const error = failureError(problem as Failure, where);
    expect([error.status, error.code, error.details]).to.deep.equal([400, 'RT_ERR_INVALID_ARGUMENTS', 'x[1][1]: expected u32 (0..4294967295), got -3']);
    expect(decodeJson(codec, bytes('{"y": []}'))).to.deep.include({ kind: 'invalid-arguments' });
  });

  it('keeps bytes that are alone in their buffer, and copies those that share one (they are moved to the thread)', () => {
    const own = bytes('[[[1]]]');
    expect(alone(own)).to.equal(own);
    const shared = Buffer.from('xx[[[1]]]xx').subarray(2, 9);
    const copied = alone(shared);
    expect(copied).to.not.equal(shared);
    expect(copied.buffer).to.not.equal(shared.buffer);
    expect(Buffer.from(copied).toString()).to.equal('[[[1]]]');
  });
});
