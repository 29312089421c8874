// Raw bytes in and out (docs/api.md §5.1), and the sidecar's media types, over
// HTTP to a worker served in process (test/support/in-process.ts).

import { expect } from 'chai';
import { BYTES, examplesRepository, repository } from '../support/fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, invoke } from '../support/rt-process.js';

describe('raw bytes (in process)', function () {
  this.timeout(240_000);
  let rt: InProcessRt;
  let url: string;

  before(async () => {
    const examples = await examplesRepository();
    const repo = await repository({
      bytes: BYTES,
      'bytes.toml': { raw: '[media_types]\nreverse = "image/png"\n' },
      'unknown-key': BYTES,
      'unknown-key.toml': { raw: 'domain = "x"\nservice = "unknown-key"\ncolour = "blue"\n' },
      'bad-media': BYTES,
      'bad-media.toml': { raw: 'service = "bad-media"\n[media_types]\nsize = "image/png"\n' },
    });
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${examples}/calculator.wasm", "file://${repo}"]` });
    url = `${rt.url}/api/services/acme/bytes/invoke`;
  });

  after(async () => {
    await rt?.stop();
  });

  const raw = (path: string, body: Uint8Array, headers: Record<string, string> = {}) =>
    fetch(`${url}/${path}`, { method: 'POST', body: body as BodyInit, headers: { 'content-type': 'application/octet-stream', ...headers } });

  it('takes an application/octet-stream body for a method whose only parameter is list<u8>', async () => {
    const res = await raw('size', new Uint8Array(1000));
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ result: 1000 });
  });

  it('answers a list<u8> result as raw bytes, with the media type the sidecar declares', async () => {
    const res = await raw('reverse', new Uint8Array([1, 2, 3, 250]));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/png');
    expect([...new Uint8Array(await res.arrayBuffer())]).to.deep.equal([250, 3, 2, 1]);
  });

  it('answers JSON with base64 when the request accepts application/json', async () => {
    const res = await raw('reverse', new Uint8Array([1, 2, 3]), { accept: 'application/json' });
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    expect(await res.json()).to.deep.equal({ result: 'AwIB' });
  });

  it('takes list<u8> as base64 or an array of numbers in a JSON body', async () => {
    const fromBase64 = await fetch(`${url}/reverse`, { method: 'POST', body: '{"data":"AQID"}', headers: { 'content-type': 'application/json' } });
    expect([...new Uint8Array(await fromBase64.arrayBuffer())]).to.deep.equal([3, 2, 1]);
    const fromArray = await invoke(rt, 'acme/bytes/invoke/size', { data: [1, 2, 3, 4] });
    expect(fromArray.body).to.deep.equal({ result: 4 });
  });

  it('takes an empty raw body as an empty list', async () => {
    const res = await raw('size', new Uint8Array(0));
    expect(await res.json()).to.deep.equal({ result: 0 });
  });

  it('415 for raw bytes to a method that does not take one list<u8>', async () => {
    const res = await call(`${rt.url}/api/services/example/calculator/invoke/add`, { body: new Uint8Array([1]), contentType: 'application/octet-stream' });
    expect(res.status).to.equal(415);
    expect(res.body.details).to.include('list<u8>');
  });

  it('skips a component whose sidecar is invalid, saying which file and key', async () => {
    const failed = (await call(`${rt.url}/api/services`, { method: 'GET' })).body.failed as { source: string; error: string }[];
    const unknown = failed.find((f) => f.source.endsWith('unknown-key.wasm'))!;
    expect(unknown.error).to.match(/unknown-key\.toml: unknown key "colour"/);
    const media = failed.find((f) => f.source.endsWith('bad-media.wasm'))!;
    expect(media.error).to.match(/bad-media\.toml: media_types\.size: only a method returning list<u8>/);
  });
});
