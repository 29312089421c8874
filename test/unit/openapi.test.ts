// The OpenAPI document of the whole API (lib/openapi/, docs/api.md §5): every
// operation of §5 with its statuses, the one error schema, who may call what
// (§5.6: the bearer scheme of http.control.token on exactly the routes the
// control guard guards), Redocly's recommended rules, and its `servers`
// entry: rt as the request reached it, through trusted proxies as they say.

import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument, serialize, withServers } from '../../lib/openapi/document.js';
import { serverUrl, type RequestedUrl } from '../../lib/openapi/servers.js';
import type { ServiceDescriptor } from '../../lib/service.js';
import { CONTROL_ROUTES } from '../../lib/worker/http/control-guard.js';
import { versioned } from '../support/fixtures.js';
import { catalog } from '../support/hosting.js';
import { listed, recommendedLint } from '../support/openapi-lint.js';
import { COUNTERS } from '../support/resource-fixtures.js';

interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  security: Record<string, string[]>[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: Record<string, unknown> }> }>;
}
type Document = {
  paths: Record<string, Record<string, Operation | unknown[]>>;
  components: { schemas: Record<string, unknown>; securitySchemes?: Record<string, { type: string; scheme: string }> };
  tags: { name: string; description: string }[];
};

const METHODS = ['get', 'put', 'post', 'delete', 'head', 'patch'];

/** Every operation of `document` as `METHOD path`, with it. */
function operations(document: Document): [string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op as Operation]),
  );
}

/** A control route (control-guard.ts) as the document writes its path: `/api/...{domain}`. */
const documented = (route: { method: string; path: string }) => `${route.method} /api${route.path.replace(/:([a-z]+)/g, '{$1}')}`;

describe('the OpenAPI document of the whole API', function () {
  this.timeout(60_000);
  let services: ServiceDescriptor[];
  const build = (token: boolean) => openApiDocument(services, { version: '1.2.3', token }) as unknown as Document;

  before(async () => {
    const built = await catalog({ counters: COUNTERS, versioned: versioned(1) });
    expect(built.failures).to.deep.equal([]);
    services = built.services;
  });

  it("has every operation of docs/api.md §5's table, rt's own and the services'", () => {
    const ops = operations(build(false)).map(([name]) => name);
    expect(ops).to.include.members([
      'POST /api/reload',
      'POST /api/services/{domain}/{service}/restart',
      'PUT /api/services/{domain}/{service}/quiesce',
      'GET /api/services',
      'GET /api/services/{domain}/{service}',
      'GET /api/openapi.json',
      'GET /api/health',
      'GET /api/ready',
      'GET /api/metrics',
      'POST /api/services/acme/versioned/invoke/version',
      'POST /api/services/acme/counters/resources/counter',
      'POST /api/services/acme/counters/handles/{handle}/invoke/add',
      'DELETE /api/services/acme/counters/handles/{handle}',
      'GET /api/services/acme/counters/handles',
    ]);
  });

  it('gives each operation a unique operationId, a summary, a tag the document declares, and a 2xx and a 4xx answer', () => {
    const document = build(true);
    const all = operations(document);
    const ids = all.map(([, op]) => op.operationId);
    expect(new Set(ids).size).to.equal(ids.length);
    const tags = new Set(document.tags.map((t) => t.name));
    for (const [name, op] of all) {
      expect(op.summary, name).to.be.a('string').and.not.equal('');
      expect(op.tags.every((t) => tags.has(t)), name).to.equal(true);
      const statuses = Object.keys(op.responses);
      // A handler's own answers are its `default`.
      if (!name.includes('/http')) expect(statuses.some((s) => s.startsWith('2')), name).to.equal(true);
      expect(statuses.some((s) => s.startsWith('4')), name).to.equal(true);
    }
    expect(ids).to.include.members(['reload', 'restartService', 'quiesceService', 'listServices', 'describeService', 'openApiDocument', 'health', 'ready', 'metrics']);
  });

  it('answers every failure with the one error schema, which names the catalogue\'s codes', () => {
    const document = build(true);
    const error = { $ref: '#/components/schemas/Error' };
    for (const [name, op] of operations(document)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[45]/.test(status)) continue;
        const schema = response.content?.['application/json']?.schema;
        const refersToIt = JSON.stringify(schema) === JSON.stringify(error) || (schema?.allOf as unknown[] | undefined)?.some((s) => JSON.stringify(s) === JSON.stringify(error));
        expect(refersToIt, `${name} ${status}`).to.equal(true);
      }
    }
    const schema = document.components.schemas.Error as { properties: { code: { enum: string[] } }; required: string[] };
    expect(schema.required).to.deep.equal(['error', 'code', 'details']);
    expect(schema.properties.code.enum).to.include.members(['RT_ERR_UNKNOWN_SERVICE', 'RT_ERR_UNAUTHORIZED']);
  });

  it("gives the answers' bodies their schemas: reload's, the listing's, describe's, readiness's, metrics as text", () => {
    const { paths, components } = build(false);
    const ok = (path: string, method: string) => (paths[path][method] as Operation).responses['200'].content!;
    expect(ok('/api/reload', 'post')['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Reloaded' });
    expect(ok('/api/services', 'get')['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Services' });
    expect(ok('/api/services/{domain}/{service}', 'get')['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Service' });
    expect(ok('/api/ready', 'get')['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Ready' });
    expect(ok('/api/metrics', 'get')).to.have.key('text/plain');
    expect(components.schemas).to.include.keys('Reloaded', 'Restarted', 'Quiesced', 'Services', 'ServiceSummary', 'Service', 'Alive', 'Ready', 'Handles');
    expect((paths['/api/ready'].get as Operation).responses['503'].headers).to.have.property('Retry-After');
  });

  it('leaves out schemas no operation uses', () => {
    const withoutResources = openApiDocument(services.filter((s) => s.id.service !== 'counters'), { version: '1', token: false }) as unknown as Document;
    expect(withoutResources.components.schemas).not.to.have.property('Handles');
    expect(withoutResources.components.schemas).to.have.property('Error');
  });

  it('without a token: no security scheme, and `security: []` on every operation', () => {
    const document = build(false);
    expect(document.components).not.to.have.property('securitySchemes');
    for (const [name, op] of operations(document)) {
      expect(op.security, name).to.deep.equal([]);
      expect(op.responses, name).not.to.have.property('401');
    }
    // Foreign pages are refused control operations whatever the token.
    expect((document.paths['/api/reload'].post as Operation).responses).to.have.property('403');
  });

  it('with a token: the bearer scheme, required on exactly the routes the control guard guards, optional on the listing of handles', () => {
    const document = build(true);
    expect(document.components.securitySchemes?.controlToken).to.include({ type: 'http', scheme: 'bearer' });
    const bearer = [{ controlToken: [] }];
    const guardedOps = operations(document).filter(([, op]) => JSON.stringify(op.security) === JSON.stringify(bearer));
    expect(guardedOps.map(([name]) => name)).to.have.members(CONTROL_ROUTES.map(documented));
    for (const [name, op] of guardedOps) {
      expect(op.responses, name).to.include.keys('401', '403');
      expect(op.responses['401'].headers, name).to.have.property('WWW-Authenticate');
    }
    const listing = document.paths['/api/services/acme/counters/handles'].get as Operation;
    expect(listing.security).to.deep.equal([{}, { controlToken: [] }]);
    expect(listing.responses).to.include.keys('401', '403');
    const others = operations(document).filter(([name]) => !guardedOps.some(([g]) => g === name) && !name.endsWith('/handles'));
    expect(others.length).to.be.above(10);
    for (const [name, op] of others) expect(op.security, name).to.deep.equal([]);
  });

  for (const token of [false, true]) {
    it(`passes Redocly's recommended rules without a problem, and validates as OpenAPI 3.1 (${token ? 'with' : 'without'} a token)`, async () => {
      const text = withServers(serialize(openApiDocument(services, { version: '1.2.3', token })), 'http://127.0.0.1:9481');
      const problems = await recommendedLint(text);
      expect(problems, listed(problems)).to.deep.equal([]);
      const result = await new Validator().validate(JSON.parse(text));
      expect(result.valid, JSON.stringify(result.errors)).to.equal(true);
    });
  }

  it('would report a document without servers or security (the lint can fail)', async () => {
    const { servers: _, ...bare } = JSON.parse(withServers(serialize(openApiDocument(services, { version: '1', token: false })), 'http://h')) as Record<string, unknown>;
    const paths = bare.paths as Document['paths'];
    delete (paths['/api/health'].get as Partial<Operation>).security;
    const rules = (await recommendedLint(JSON.stringify(bare))).filter((p) => p.severity === 'error').map((p) => p.rule);
    expect(rules).to.include.members(['no-empty-servers', 'security-defined']);
  });

  it('splices servers in after info, into the document serialized once', () => {
    const document = openApiDocument(services, { version: '1.2.3', token: false });
    const text = withServers(serialize(document), 'https://rt.example');
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).to.deep.equal(['openapi', 'info', 'servers', 'tags', 'paths', 'components']);
    expect(parsed.servers).to.deep.equal([{ url: 'https://rt.example', description: 'This rt, as the request for this document reached it' }]);
    expect({ ...parsed, servers: undefined }).to.deep.equal({ ...JSON.parse(JSON.stringify(document)), servers: undefined });
  });

  describe('servers', () => {
    const local = { address: '127.0.0.1', port: 9481 };
    const url = (request: Partial<RequestedUrl>) => serverUrl({ tls: false, host: undefined, local, ...request });

    it("is rt as the request's Host names it, over the connection's scheme, the default port left out", () => {
      expect(url({ host: '127.0.0.1:9481' })).to.equal('http://127.0.0.1:9481');
      expect(url({ host: 'RT.Example:80' })).to.equal('http://rt.example');
      expect(url({ tls: true, host: 'rt.example:443' })).to.equal('https://rt.example');
      expect(url({ tls: true, host: '[::1]:9443' })).to.equal('https://[::1]:9443');
    });

    it('is never 0.0.0.0 nor a Host that is no plain host[:port]: then the address the connection reached', () => {
      expect(url({ host: '0.0.0.0:9481' })).to.equal('http://127.0.0.1:9481');
      expect(url({ host: '[::]:9481' })).to.equal('http://127.0.0.1:9481');
      expect(url({ host: 'evil.example@rt' })).to.equal('http://127.0.0.1:9481');
      expect(url({ host: undefined })).to.equal('http://127.0.0.1:9481');
      expect(url({ host: '', local: { address: '::ffff:10.0.0.5', port: 80 } })).to.equal('http://10.0.0.5');
      expect(url({ host: undefined, local: { address: 'fd00::7', port: 9481 } })).to.equal('http://[fd00::7]:9481');
    });

    it("behind a trusted proxy, is what its X-Forwarded-Proto and -Host say (the first of a list), each falling back on the request's own", () => {
      expect(url({ host: '10.0.0.2:9481', forwarded: { proto: 'https', host: 'api.example' } })).to.equal('https://api.example');
      expect(url({ host: '10.0.0.2:9481', forwarded: { proto: 'HTTPS, http', host: 'api.example:8443, 10.0.0.2' } })).to.equal('https://api.example:8443');
      expect(url({ host: 'rt.internal:9481', forwarded: { proto: 'https', host: undefined } })).to.equal('https://rt.internal:9481');
      expect(url({ host: 'rt.internal:9481', forwarded: { proto: 'gopher', host: 'x@y' } })).to.equal('http://rt.internal:9481');
    });
  });
});
