// Control operations (restart, quiesce, reload) from browsers, over HTTP to rt
// in process (test/support/in-process.ts),
// and the optional token (docs/api.md §5.6). A page on a foreign site must not
// change what runs, whatever its content type (a text/plain POST is sent
// without a preflight); rt's own pages, listed origins and clients that are
// not browsers (curl: no Origin, no Sec-Fetch-Site) may.

import { expect } from 'chai';
import { repository, versioned } from '../support/fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { call, type JsonResponse } from '../support/rt-process.js';

const LISTED = 'https://admin.example';
const FOREIGN = 'https://evil.example';
const TOKEN = 'correct horse battery staple';

describe('control operations from browsers, and the token (in process)', function () {
  this.timeout(120_000);
  let repo: string;

  before(async function () {
    this.timeout(300_000);
    repo = await repository({ versioned: versioned(1) });
  });

  /** A control request: reload, restart or quiesce of acme.versioned, with the given headers (and body). */
  const control = (rt: InProcessRt, op: 'reload' | 'restart' | 'quiesce', headers: Record<string, string> = {}, body?: string): Promise<JsonResponse> => {
    const path = op === 'reload' ? '/api/reload' : `/api/services/acme/versioned/${op}`;
    return call(`${rt.url}${path}`, { method: op === 'quiesce' ? 'PUT' : 'POST', headers, ...(body === undefined ? {} : { body }) });
  };

  describe('without a token', () => {
    let rt: InProcessRt;

    before(async () => {
      rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${repo}"]\n[http.control]\nallowed_origins = ["${LISTED}/"]\n` });
    });

    after(async () => {
      await rt?.stop();
    });

    it('refuses restart, quiesce and reload from a foreign origin with 403, whatever the content type, before doing anything', async () => {
      for (const op of ['reload', 'restart', 'quiesce'] as const) {
        // A "simple" request: a page can send it without a preflight.
        const res = await control(rt, op, { origin: FOREIGN, 'content-type': 'text/plain' }, '{"greeting": "pwned"}');
        expect(res.status, `${op}: ${res.text}`).to.equal(403);
        expect(res.body).to.include({ error: 'forbidden', code: 'RT_ERR_FORBIDDEN' });
        expect(res.body.details).to.include(FOREIGN);
        if (op !== 'reload') expect(res.body).to.include({ service: 'acme.versioned' });
        expect(res.headers.get('x-request-id')).to.be.a('string');
      }
      const listing = await call(`${rt.url}/api/services`, { method: 'GET' });
      const service = (listing.body.services as { service: string; state: string; config: unknown }[]).find((s) => s.service === 'versioned');
      expect(service, 'not quiesced, not reconfigured').to.deep.include({ state: 'active', config: null });
      expect(await rt.logged((l) => l.msg === 'request' && l.status === 403)).to.equal(true);
    });

    it('refuses Sec-Fetch-Site: cross-site without an Origin, and foreign origins: another port, null, same site', async () => {
      expect((await control(rt, 'reload', { 'sec-fetch-site': 'cross-site' })).status).to.equal(403);
      expect((await control(rt, 'reload', { origin: `http://127.0.0.1:${rt.port + 1}` })).status).to.equal(403);
      expect((await control(rt, 'reload', { origin: 'null' })).status).to.equal(403);
      // Same site is still another origin.
      expect((await control(rt, 'reload', { origin: `http://localhost:${rt.port}`, 'sec-fetch-site': 'same-site' })).status).to.equal(403);
    });

    it("allows rt's own origin (Origin matches Host), a listed origin (even cross-site), and clients that send neither header (curl)", async () => {
      const own = await control(rt, 'reload', { origin: `http://127.0.0.1:${rt.port}`, 'sec-fetch-site': 'same-origin' });
      expect(own.status, own.text).to.equal(200);
      expect(own.body).to.include({ status: 'reloaded' });
      const listed = await control(rt, 'restart', { origin: LISTED, 'sec-fetch-site': 'cross-site' });
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.body).to.include({ status: 'restarted' });
      const curl = await control(rt, 'quiesce');
      expect(curl.status, curl.text).to.equal(200);
      expect((await control(rt, 'restart')).status).to.equal(200);
    });

    it('leaves invoke and the listing to http.cors (any origin by default)', async () => {
      const res = await call(`${rt.url}/api/services/acme/versioned/invoke/version`, { headers: { origin: FOREIGN, 'sec-fetch-site': 'cross-site' } });
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    });

    it('grants no foreign origin in a preflight for a control path; a listed one is granted by name', async () => {
      const preflight = (path: string, origin: string) =>
        fetch(`${rt.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
      for (const path of ['/api/reload', '/api/services/acme/versioned/restart', '/API/Reload/']) {
        const foreign = await preflight(path, FOREIGN);
        expect(foreign.headers.get('access-control-allow-origin'), path).to.equal(null);
      }
      const listed = await preflight('/api/reload', LISTED);
      expect(listed.headers.get('access-control-allow-origin')).to.equal(LISTED);
      const invoke = await preflight('/api/services/acme/versioned/invoke/version', FOREIGN);
      expect(invoke.headers.get('access-control-allow-origin')).to.equal('*');
    });
  });

  describe('with http.control.token', () => {
    let rt: InProcessRt;

    before(async () => {
      rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${repo}"]`, env: { RT__HTTP__CONTROL__TOKEN: TOKEN } });
    });

    after(async () => {
      await rt?.stop();
    });

    it('answers 401 without the bearer token or with a wrong one, and carries out the request with it', async () => {
      const none = await control(rt, 'reload');
      expect(none.status).to.equal(401);
      expect(none.body).to.include({ error: 'unauthorized', code: 'RT_ERR_UNAUTHORIZED' });
      expect(none.headers.get('www-authenticate')).to.match(/^Bearer /);
      for (const authorization of [`Bearer ${TOKEN}x`, 'Bearer ', `Basic ${TOKEN}`, `Bearer ${TOKEN.slice(0, -1)}`]) {
        const res = await control(rt, 'restart', { authorization });
        expect(res.status, authorization).to.equal(401);
        expect(res.body).to.include({ service: 'acme.versioned' });
      }
      expect((await control(rt, 'reload', { authorization: `Bearer ${TOKEN}` })).status).to.equal(200);
      expect((await control(rt, 'restart', { authorization: `bearer ${TOKEN}` })).status).to.equal(200);
    });

    it('still refuses a foreign origin that has the token, and asks no token to invoke', async () => {
      expect((await control(rt, 'reload', { authorization: `Bearer ${TOKEN}`, origin: FOREIGN })).status).to.equal(403);
      expect((await call(`${rt.url}/api/services/acme/versioned/invoke/version`)).status).to.equal(200);
    });
  });
});
