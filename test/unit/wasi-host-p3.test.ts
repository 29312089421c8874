// WASI 0.3's wasi:http/types host (lib/worker/wasi-host/p3) without a
// component: the rules its objects keep for the guest (what becomes
// immutable, what can be taken once), and how rt reads a body whoever made
// it. The glue's side is tested with real components (glue-rewrite.test.ts,
// the handler e2e tests).

import { expect } from 'chai';
import { GuestMisuse, WasiError } from '../../lib/worker/wasi-host/core/host-objects.js';
import { byteReader, type GuestByteStream } from '../../lib/worker/wasi-host/p3/bodies.js';
import { Fields } from '../../lib/worker/wasi-host/p3/fields.js';
import { timerMs } from '../../lib/worker/wasi-host/core/outgoing-transport.js';
import { Request, RequestOptions, Response } from '../../lib/worker/wasi-host/p3/http-types.js';

const enc = new TextEncoder();
const OK_NONE = Promise.resolve({ tag: 'ok' as const, val: undefined });

describe('wasi-host p3: wasi:http/types@0.3 for handlers and clients', () => {
  it('reads a body rt made in pieces of at most what is asked, to its end, and lets its source go when closed', async () => {
    let returned = false;
    async function* source() {
      try {
        yield enc.encode('hello ');
        yield enc.encode('world');
      } finally {
        returned = true;
      }
    }
    const reader = byteReader(source());
    const pieces: string[] = [];
    for (let bytes = await reader.read(4); bytes; bytes = await reader.read(4)) pieces.push(Buffer.from(bytes).toString());
    expect(pieces).to.deep.equal(['hell', 'o ', 'worl', 'd']);
    const early = byteReader(source());
    await early.read(1);
    early.close();
    await Promise.resolve();
    expect(returned, 'the generator was returned').to.equal(true);
  });

  it("reads a guest's stream as the glue gives it (numbers or bytes, empty reads skipped) and drops it when closed", async () => {
    const reads: { done: boolean; value?: Uint8Array | number[] }[] = [{ done: false, value: [104, 105] }, { done: false, value: new Uint8Array(0) }, { done: false, value: enc.encode('!') }, { done: true }];
    let dropped = false;
    const stream: GuestByteStream = { read: () => Promise.resolve(reads.shift()!), return: () => Promise.resolve((dropped = true)) };
    const reader = byteReader(stream);
    expect(Buffer.from((await reader.read(10))!).toString()).to.equal('hi');
    expect(Buffer.from((await reader.read(10))!).toString()).to.equal('!');
    expect(await reader.read(10)).to.equal(undefined);
    reader.close();
    expect(dropped).to.equal(true);
  });

  it("makes a guest's request GET with no path, scheme or authority until set, its headers and options fixed once attached, its body taken once", () => {
    const headers = new Fields();
    headers.append('x-a', enc.encode('1'));
    const options = new RequestOptions();
    options.setConnectTimeout(5_000_000n);
    const [request] = Request.new(headers, undefined, OK_NONE, options);
    expect(request.getMethod()).to.deep.equal({ tag: 'get' });
    expect([request.getPathWithQuery(), request.getScheme(), request.getAuthority()]).to.deep.equal([undefined, undefined, undefined]);
    request.setMethod({ tag: 'other', val: 'PURGE' });
    request.setScheme({ tag: 'HTTPS' });
    expect(request.outgoing()).to.include({ method: 'PURGE', scheme: 'https', pathWithQuery: '/' });
    expect(() => headers.append('x-b', enc.encode('2'))).to.throw(WasiError).with.property('payload').that.deep.equals({ tag: 'immutable' });
    expect(() => options.setFirstByteTimeout(1n)).to.throw(WasiError);
    // What the guest reads back is a copy it may change.
    const copy = request.getOptions()!;
    copy.setFirstByteTimeout(1n);
    expect(copy.getConnectTimeout()).to.equal(5_000_000n);
    Request.consumeBody(request, OK_NONE);
    expect(() => Request.consumeBody(request, OK_NONE)).to.throw(GuestMisuse, /already taken/);
  });

  it("gives a client.send's timeouts to the transport as timers can hold them: rounded up, at most setTimeout's longest", () => {
    const options = new RequestOptions();
    options.setConnectTimeout(1n);
    options.setFirstByteTimeout(2n ** 64n - 1n);
    expect([timerMs(options.getConnectTimeout()), timerMs(options.getFirstByteTimeout()), timerMs(options.getBetweenBytesTimeout())]).to.deep.equal([1, 2 ** 31 - 1, undefined]);
  });

  it('takes any status a u16 of 100–999 can be for the guest to set (what can be sent is checked as it goes out)', () => {
    const [response] = Response.new(new Fields(), undefined, OK_NONE);
    expect(response.getStatusCode()).to.equal(200);
    response.setStatusCode(700);
    expect(response.getStatusCode()).to.equal(700);
    for (const bad of [99, 1000]) expect(() => response.setStatusCode(bad)).to.throw(WasiError);
  });

  it('stops what brings the body of a response rt made when the guest drops it unread, and not once it was taken', () => {
    let abandoned = 0;
    const unread = Response.fromHost({ status: 200, headers: [] }, (async function* () {})(), OK_NONE, () => abandoned++);
    unread[Symbol.dispose]();
    expect(abandoned).to.equal(1);
    const read = Response.fromHost({ status: 200, headers: [] }, (async function* () {})(), OK_NONE, () => abandoned++);
    Response.consumeBody(read, OK_NONE);
    read[Symbol.dispose]();
    expect(abandoned).to.equal(1);
  });
});
