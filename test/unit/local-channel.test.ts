// A handler request's body and response on one thread (an inline WASI 0.3
// handler: wasi-host/core/local-channel.ts, MainEnd.takeLocally): the body
// the route fed before and after the handler took it, in order, with its
// end, trailers or failure; the guest's reads reported as taken; the
// response's credit spent by its chunks and given back by grants; the
// client's departure; and every change waking whoever waits on the waker.

import { expect } from 'chai';
import { LocalEnd, MainEnd, type ResponseListener, type Settled } from '../../lib/worker/wasi-host/index.js';
import type { FieldEntry } from '../../lib/worker/wasi-host/core/field-rules.js';

const enc = new TextEncoder();

/** A listener that records what reaches it, and the request body bytes it was told were taken. */
function recorder(): ResponseListener & { seen: string[]; takenBytes: number } {
  const seen: string[] = [];
  const listener = {
    seen,
    takenBytes: 0,
    head: (head: { status: number }) => void seen.push(`head ${head.status}`),
    malformed: (problem: string) => void seen.push(`malformed ${problem}`),
    refused: (code: { tag: string }) => void seen.push(`refused ${code.tag}`),
    chunk: (bytes: Uint8Array) => void seen.push(`chunk ${Buffer.from(bytes).toString()}`),
    finish: (trailers: FieldEntry[] | undefined) => void seen.push(`finish ${trailers?.length ?? 0}`),
    abort: (reason: string) => void seen.push(`abort ${reason}`),
    settled: (settled: Settled) => void seen.push(`settled ${settled.outcome.kind}`),
    taken: (bytes: number) => void (listener.takenBytes += bytes),
  };
  return listener;
}

async function readAll(end: LocalEnd): Promise<string> {
  let text = '';
  for await (const chunk of end.body.chunks(end.waker)) text += Buffer.from(chunk).toString();
  return text;
}

describe('a handler request on one thread (local channel)', () => {
  it('gives the guest what was fed before it took the body and after, in order, then the end and its trailers; its reads are told as taken', async () => {
    const listener = recorder();
    const channel = new MainEnd(listener, 1024);
    channel.push(enc.encode('one '));
    const end = channel.takeLocally((l, window) => new LocalEnd(l, window));
    const reading = readAll(end);
    channel.push(enc.encode('two '));
    channel.push(enc.encode('three'));
    channel.end([['x-sum', enc.encode('3')]]);
    expect(await reading).to.equal('one two three');
    expect(end.body.status()).to.deep.equal({ kind: 'ended' });
    expect(end.body.trailers()).to.deep.equal([['x-sum', enc.encode('3')]]);
    expect(listener.takenBytes).to.equal(13);
  });

  it('lets the bytes that came before a failure be read, then shows the failure', async () => {
    const channel = new MainEnd(recorder(), 1024);
    const end = channel.takeLocally((l, window) => new LocalEnd(l, window));
    channel.push(enc.encode('partial'));
    channel.fail('the client went away');
    expect(end.body.status()).to.deep.equal({ kind: 'open' });
    expect(Buffer.from(end.body.read(100)).toString()).to.equal('partial');
    expect(end.body.status()).to.deep.equal({ kind: 'failed', reason: 'the client went away' });
  });

  it('spends the response window on chunks and gets it back from grants; the client leaving closes it; each wakes the waker', async () => {
    const listener = recorder();
    const channel = new MainEnd(listener, 10);
    const end = channel.takeLocally((l, window) => new LocalEnd(l, window));
    end.sink.head({ status: 200, headers: [] });
    expect(end.sink.credit()).to.equal(10);
    end.sink.chunk(enc.encode('hello'));
    end.sink.chunk(enc.encode('world'));
    expect(end.sink.credit()).to.equal(0);
    let seen = end.waker.epoch();
    const woken = end.waker.moved(seen);
    channel.grant(4);
    await woken;
    expect(end.sink.credit()).to.equal(4);
    seen = end.waker.epoch();
    channel.close();
    await end.waker.moved(seen);
    expect([end.sink.open(), end.sink.credit()]).to.deep.equal([false, 0]);
    end.sink.finish(undefined);
    expect(listener.seen).to.deep.equal(['head 200', 'chunk hello', 'chunk world', 'finish 0']);
  });

  it('closes what it hands over when the client left before the handler took the request', () => {
    const channel = new MainEnd(recorder(), 10);
    channel.close();
    const end = channel.takeLocally((l, window) => new LocalEnd(l, window));
    expect(end.sink.open()).to.equal(false);
  });
});
