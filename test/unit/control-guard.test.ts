// Control requests from browsers, and the token (lib/worker/http/control-guard.ts,
// docs/api.md §5.6): which origins are rt's own or listed, what is refused with
// 403 or 401, which paths are control paths, and who sees handle ids whole
// in a listing (§5.1.2).

import { expect } from 'chai';
import { controlOriginAllowed, controlPolicy, controlRefusal, followsControlOrigins, handleListing, isControlPath, type ControlCredentials } from '../../lib/worker/http/control-guard.js';

const open = controlPolicy({ allowed_origins: [] });
const listed = controlPolicy({ allowed_origins: ['https://Admin.example:443/', 'http://tools.example:8080'] });
const guarded = controlPolicy({ allowed_origins: [], token: 's3cret token' });

const status = (request: ControlCredentials, policy = open) => controlRefusal(request, policy)?.status ?? 200;

describe('control guard', () => {
  it("takes an Origin whose host and port are the request's Host as rt's own, whatever the scheme and case", () => {
    expect(controlOriginAllowed('http://127.0.0.1:9481', '127.0.0.1:9481', open)).to.equal(true);
    expect(controlOriginAllowed('https://RT.example', 'rt.example', open)).to.equal(true);
    expect(controlOriginAllowed('https://rt.example', 'rt.example:443', open)).to.equal(true);
    // Behind a TLS proxy: the page is https, rt is reached over http with the proxy's Host.
    expect(controlOriginAllowed('https://rt.example:8443', 'rt.example:8443', open)).to.equal(true);
    expect(controlOriginAllowed('http://[::1]:9481', '[::1]:9481', open)).to.equal(true);
  });

  it('takes any other origin as foreign: another port, host, a missing or odd Host, null', () => {
    expect(controlOriginAllowed('http://127.0.0.1:9482', '127.0.0.1:9481', open)).to.equal(false);
    expect(controlOriginAllowed('http://evil.example:9481', '127.0.0.1:9481', open)).to.equal(false);
    expect(controlOriginAllowed('http://rt.example', 'rt.example.evil.example', open)).to.equal(false);
    expect(controlOriginAllowed('http://127.0.0.1:9481', undefined, open)).to.equal(false);
    expect(controlOriginAllowed('http://127.0.0.1:9481', 'evil.example@127.0.0.1:9481', open)).to.equal(false);
    expect(controlOriginAllowed('null', 'null', open)).to.equal(false);
    expect(controlOriginAllowed('not a url', '127.0.0.1:9481', open)).to.equal(false);
  });

  it('allows listed origins, however they were spelled in the configuration, and any with "*"', () => {
    expect(controlOriginAllowed('https://admin.example', 'rt.internal:9481', listed)).to.equal(true);
    expect(controlOriginAllowed('http://tools.example:8080', 'rt.internal:9481', listed)).to.equal(true);
    expect(controlOriginAllowed('http://admin.example', 'rt.internal:9481', listed)).to.equal(false);
    expect(controlOriginAllowed('https://evil.example', 'rt.internal:9481', controlPolicy({ allowed_origins: ['*'] }))).to.equal(true);
  });

  it('answers 403 for a foreign Origin or Sec-Fetch-Site: cross-site, unless the origin is listed', () => {
    const host = 'rt.internal:9481';
    expect(status({ origin: 'https://evil.example', host })).to.equal(403);
    expect(status({ secFetchSite: 'cross-site', host })).to.equal(403);
    expect(status({ origin: 'https://admin.example', secFetchSite: 'cross-site', host }, listed)).to.equal(200);
    expect(status({ origin: 'http://rt.internal:9481', secFetchSite: 'same-origin', host })).to.equal(200);
    // curl, scripts: neither header.
    expect(status({ host })).to.equal(200);
    expect(status({ host, secFetchSite: 'none' })).to.equal(200);
    const refusal = controlRefusal({ origin: 'https://evil.example', host }, open)!;
    expect(refusal.body()).to.include({ error: 'forbidden' });
    expect(refusal.details).to.include('https://evil.example');
  });

  it('answers 401 without the exact bearer token when one is set (scheme in any case), and 403 first for a foreign origin', () => {
    expect(status({}, guarded)).to.equal(401);
    expect(controlRefusal({}, guarded)!.headers).to.deep.equal({ 'WWW-Authenticate': 'Bearer realm="rt"' });
    for (const authorization of ['Bearer s3cret', 'Bearer s3cret tokenx', 'Bearer  ', 'Basic s3cret token', 's3cret token', 'Bearer S3CRET TOKEN']) {
      expect(status({ authorization }, guarded), authorization).to.equal(401);
    }
    expect(status({ authorization: 'Bearer s3cret token' }, guarded)).to.equal(200);
    expect(status({ authorization: 'bearer s3cret token ' }, guarded)).to.equal(200);
    expect(status({ authorization: 'Bearer s3cret token', origin: 'https://evil.example', host: 'rt:1' }, guarded)).to.equal(403);
  });

  it('knows the control paths as the router matches them', () => {
    for (const path of ['/api/reload', '/api/reload/', '/API/Reload', '/api/services/acme/greeter/restart', '/api/services/acme/greeter/quiesce/']) {
      expect(isControlPath(path), path).to.equal(true);
    }
    for (const path of ['/api/services', '/api/services/acme/greeter', '/api/services/acme/greeter/invoke/restart', '/api/metrics', '/api/reloads']) {
      expect(isControlPath(path), path).to.equal(false);
    }
  });

  it('knows the listing of handles as the one other path that follows the control origins', () => {
    for (const path of ['/api/services/acme/cart/handles', '/api/services/acme/cart/handles/', '/API/Services/acme/cart/Handles', '/api/reload']) {
      expect(followsControlOrigins(path), path).to.equal(true);
    }
    for (const path of ['/api/services/acme/cart/handles/1.abc.def', '/api/services/acme/cart/handles/1.abc.def/invoke/add', '/api/services/acme/cart/resources/cart', '/api/services/acme/cart']) {
      expect(followsControlOrigins(path), path).to.equal(false);
    }
  });

  describe('the listing of handles', () => {
    const access = (request: ControlCredentials, policy = open) => {
      const answer = handleListing(request, policy);
      return 'refusal' in answer ? answer.refusal.status : answer.whole ? 'whole' : 'shortened';
    };

    it('shows whole ids only to a request with the control token, so never when none is set', () => {
      expect(access({ authorization: 'Bearer s3cret token' }, guarded)).to.equal('whole');
      expect(access({}, guarded)).to.equal('shortened');
      expect(access({})).to.equal('shortened');
      expect(access({ authorization: 'Bearer anything' })).to.equal('shortened');
    });

    it('answers 401 to a token that does not match, and 403 to a foreign page, with or without the token', () => {
      expect(access({ authorization: 'Bearer s3cret' }, guarded)).to.equal(401);
      const host = 'rt.internal:9481';
      expect(access({ origin: 'https://evil.example', host })).to.equal(403);
      expect(access({ secFetchSite: 'cross-site', host })).to.equal(403);
      expect(access({ origin: 'https://evil.example', host, authorization: 'Bearer s3cret token' }, guarded)).to.equal(403);
      expect(access({ origin: 'http://rt.internal:9481', host, authorization: 'Bearer s3cret token' }, guarded)).to.equal('whole');
      expect(access({ origin: 'https://admin.example', host }, listed)).to.equal('shortened');
      const refusal = handleListing({ origin: 'https://evil.example', host }, open);
      expect('refusal' in refusal && refusal.refusal.details).to.match(/^the listing of handles is refused from origin https:\/\/evil\.example/);
    });
  });
});
