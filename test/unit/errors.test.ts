// The error catalogue (lib/errors.ts) and the places that map other failures
// onto it: what status, code and body each answer gets.

import { expect } from 'chai';
import { outcomeStatus } from '../../lib/control.js';
import { ApiError, asApiError, ERRORS, type ErrorCode } from '../../lib/errors.js';
import { connectionError } from '../../lib/worker/http/connection-errors.js';

describe('error catalogue', () => {
  it('gives every code its own description and an error status', () => {
    const entries = Object.entries(ERRORS);
    expect(new Set(entries.map(([, e]) => e.error)).size).to.equal(entries.length);
    for (const [code, { status }] of entries) {
      expect(code).to.match(/^RT_ERR_[A-Z_]+$/);
      expect(status, code).to.be.within(400, 599);
    }
  });

  it("answers with the code's status and description, the code, the details and the context", () => {
    const e = new ApiError('RT_ERR_UNKNOWN_METHOD', 'no method nope', { service: 'a.b', method: 'nope' });
    expect(e.status).to.equal(404);
    expect(e.body()).to.deep.equal({ error: 'unknown method', code: 'RT_ERR_UNKNOWN_METHOD', details: 'no method nope', service: 'a.b', method: 'nope' });
  });

  it("keeps a status another layer chose (Koa's 4xx), under the code's description", () => {
    const koaError = Object.assign(new Error('URI malformed'), { status: 414 });
    const mapped = asApiError(koaError);
    expect(mapped.status).to.equal(414);
    expect(mapped.body()).to.deep.equal({ error: 'bad request', code: 'RT_ERR_BAD_REQUEST', details: 'URI malformed' });
  });

  it('answers anything else thrown as a 500 internal error, ApiErrors as they are', () => {
    expect(asApiError(new TypeError('x is undefined')).body()).to.deep.equal({ error: 'internal error', code: 'RT_ERR_INTERNAL', details: 'x is undefined' });
    expect(asApiError(Object.assign(new Error('upstream'), { status: 502 })).status).to.equal(500);
    expect(asApiError('a string').status).to.equal(500);
    const own = new ApiError('RT_ERR_FORBIDDEN', 'no');
    expect(asApiError(own)).to.equal(own);
  });

  it("maps Node's HTTP parser errors: timeout 408, header overflow 431, malformed 400, a hang-up to nothing", () => {
    const node = (code: string, reason?: string) => Object.assign(new Error(code), { code, reason });
    const code = (e: ApiError | undefined): [number, ErrorCode] | undefined => e && [e.status, e.code];
    expect(code(connectionError(node('ERR_HTTP_REQUEST_TIMEOUT')))).to.deep.equal([408, 'RT_ERR_REQUEST_TIMEOUT']);
    expect(code(connectionError(node('HPE_HEADER_OVERFLOW')))).to.deep.equal([431, 'RT_ERR_REQUEST_HEADERS_TOO_LARGE']);
    expect(code(connectionError(node('HPE_INVALID_METHOD', 'Invalid method encountered')))).to.deep.equal([400, 'RT_ERR_BAD_REQUEST']);
    expect(connectionError(node('HPE_INVALID_METHOD', 'Invalid method encountered'))!.details).to.contain('Invalid method encountered');
    expect(connectionError(node('HPE_INVALID_EOF_STATE'))).to.equal(undefined);
    expect(connectionError(node('ECONNRESET'))).to.equal(undefined);
  });

  it("counts a control operation by the status its outcome answers with", () => {
    expect(outcomeStatus({ kind: 'reloaded', added: [], updated: [], removed: [], failed: [] })).to.equal(200);
    expect(outcomeStatus({ kind: 'failed', code: 'RT_ERR_INVALID_CONFIGURATION', details: 'x', context: {} })).to.equal(400);
    expect(outcomeStatus({ kind: 'failed', code: 'RT_ERR_UNKNOWN_SERVICE', details: 'x', context: {} })).to.equal(404);
  });
});
