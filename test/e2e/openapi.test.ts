// End to end: the OpenAPI document of the whole API (docs/api.md §5), as a
// real rt serves it for a repository of methods, resources and handles, and
// (on a Node line with JSPI) WASI 0.3 async and stream methods and an HTTP
// handler: it passes Redocly's recommended rules; a TypeScript client
// generated from it (openapi-typescript, openapi-fetch) type-checks and
// calls rt (a method, a handle, reload with the control token, readiness);
// its `servers` entry is rt as the request reached it, through a trusted
// proxy as the proxy says; the bearer scheme guards the control operations
// when a token is set, and nothing when none is.

import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { hasJspi } from '../../lib/platform.js';
import { asyncStreams, P3_HANDLER } from '../support/async-components.js';
import { repository, versioned } from '../support/fixtures.js';
import { listed, recommendedLint } from '../support/openapi-lint.js';
import { COUNTERS } from '../support/resource-fixtures.js';
import { RtProcess, tempDir } from '../support/rt-process.js';

const NODE_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));

interface Operation {
  security: Record<string, string[]>[];
  responses: Record<string, unknown>;
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes?: Record<string, { type: string; scheme: string }> };
}

/** GET /api/openapi.json with `headers` (node:http: fetch would not send a Host of ours): the document and its text. */
function openApi(base: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; document: Document }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/api/openapi.json`, { headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text, document: JSON.parse(text) as Document }));
    });
    req.on('error', reject).end();
  });
}

/** The program that uses the generated client: what it calls must be in the document, or it does not compile. */
const CLIENT_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export async function run(baseUrl: string, token: string) {
  const client = createClient<paths>({ baseUrl });
  const version = await client.POST('/api/services/acme/versioned/invoke/version', {});
  const created = await client.POST('/api/services/acme/counters/resources/counter', { body: { start: 40 } });
  const handle: string = created.data?.handle ?? 'none';
  const added = await client.POST('/api/services/acme/counters/handles/{handle}/invoke/add', { params: { path: { handle } }, body: { n: 2 } });
  const refused = await client.POST('/api/reload', {});
  const reloaded = await client.POST('/api/reload', { headers: { Authorization: \`Bearer \${token}\` } });
  const ready = await client.GET('/api/ready');
  return {
    version: version.data?.result,
    created: created.response.status,
    added: added.data?.result,
    refused: { status: refused.response.status, code: refused.error?.code },
    reloaded: { status: reloaded.data?.status, failed: reloaded.data?.failed },
    ready: ready.data?.status,
  };
}
`;

/** Writes the types openapi-typescript makes of `document` and the program beside them into `dir`; compiles; the diagnostics, as text. */
async function compileClient(dir: string, document: object): Promise<string[]> {
  await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(document as OpenAPI3)));
  await writeFile(join(dir, 'client.ts'), CLIENT_PROGRAM);
  await writeFile(join(dir, 'package.json'), '{"type": "module"}');
  const program = ts.createProgram([join(dir, 'client.ts')], {
    strict: true,
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
    noEmitOnError: true,
    outDir: dir,
  });
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];
  return diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/** A directory for a generated client, whose `openapi-fetch` is this checkout's. */
async function clientDir(): Promise<string> {
  const dir = await tempDir('rt-openapi-client-');
  await symlink(NODE_MODULES, join(dir, 'node_modules'), 'dir');
  return dir;
}

describe('the OpenAPI document of the whole API (e2e)', function () {
  this.timeout(180_000);
  let repo: string;

  before(async function () {
    this.timeout(300_000);
    repo = await repository({
      counters: COUNTERS,
      versioned: versioned(1),
      // WASI 0.3 (docs/api.md §5.9): async functions returning streams, and an HTTP handler with a mount.
      ...(hasJspi ? { 'p3-streams.wasm': { raw: await asyncStreams() }, web: P3_HANDLER, 'web.toml': { raw: 'http_route = "/web"\n' } } : {}),
    });
  });

  describe('with a control token, behind a trusted proxy', () => {
    const token = randomBytes(16).toString('hex');
    let rt: RtProcess;

    before(async () => {
      rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n[http]\ntrusted_proxies = ["127.0.0.1"]\n[http.control]\ntoken = "${token}"\n` });
      await rt.ready();
    });

    after(async () => {
      await rt?.stop();
    });

    it("passes Redocly's recommended rules without a problem (warnings included), and documents methods, resources, handles, streams and handler routes", async () => {
      const { status, text, document } = await openApi(rt.url);
      expect(status).to.equal(200);
      const problems = await recommendedLint(text);
      expect(problems, listed(problems)).to.deep.equal([]);
      expect(Object.keys(document.paths)).to.include.members([
        '/api/reload',
        '/api/ready',
        '/api/services/acme/versioned/invoke/version',
        '/api/services/acme/counters/resources/counter',
        '/api/services/acme/counters/handles/{handle}/invoke/add',
      ]);
      if (hasJspi) {
        const numbers = document.paths['/api/services/default/p3-streams/invoke/numbers'].post as unknown as { summary: string; 'x-rt-streaming': boolean; responses: { '200': { content: Record<string, unknown> } } };
        expect(numbers.summary).to.include('async func');
        expect(numbers['x-rt-streaming']).to.equal(true);
        expect(numbers.responses['200'].content).to.have.keys('application/x-ndjson', 'text/event-stream');
        expect(document.paths).to.include.keys('/api/services/default/web/http/{path}', '/web', '/web/{path}');
      }
    });

    it('puts the bearer scheme on the control operations, and servers as the request reached rt', async () => {
      const { document } = await openApi(rt.url);
      expect(document.components.securitySchemes?.controlToken).to.include({ type: 'http', scheme: 'bearer' });
      const bearer = [{ controlToken: [] }];
      expect(document.paths['/api/reload'].post.security).to.deep.equal(bearer);
      expect(document.paths['/api/services/{domain}/{service}/restart'].post.security).to.deep.equal(bearer);
      expect(document.paths['/api/services/{domain}/{service}/quiesce'].put.security).to.deep.equal(bearer);
      expect(document.paths['/api/ready'].get.security).to.deep.equal([]);
      expect(document.paths['/api/services/acme/versioned/invoke/version'].post.security).to.deep.equal([]);
      expect(document.servers[0].url).to.equal(rt.url);
      // The test's connection comes from 127.0.0.1, a trusted proxy here: what it forwards is what the client reached.
      const proxied = await openApi(rt.url, { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example' });
      expect(proxied.document.servers[0].url).to.equal('https://api.example');
    });

    it('gives a client generated from it that type-checks and calls rt: a method, a handle, reload with the token, readiness', async () => {
      const { document } = await openApi(rt.url);
      const dir = await clientDir();
      expect(await compileClient(dir, document)).to.deep.equal([]);
      const client = (await import(pathToFileURL(join(dir, 'client.js')).href)) as { run(baseUrl: string, token: string): Promise<Record<string, unknown>> };
      expect(await client.run(document.servers[0].url, token)).to.deep.equal({
        version: 1,
        created: 201,
        added: 42,
        refused: { status: 401, code: 'RT_ERR_UNAUTHORIZED' },
        reloaded: { status: 'reloaded', failed: [] },
        ready: 'ready',
      });
    });

    it('would not compile the client against a document without the operations it calls (the check can fail)', async () => {
      const { document } = await openApi(rt.url);
      delete (document.paths as Partial<Document['paths']>)['/api/reload'];
      const errors = await compileClient(await clientDir(), document);
      expect(errors.join('\n')).to.include('/api/reload');
    });
  });

  describe('without a token or trusted proxies', () => {
    let rt: RtProcess;

    before(async () => {
      rt = await RtProcess.start({ workers: 1, configToml: `repo_urls = ["file://${repo}"]\n` });
      await rt.ready();
    });

    after(async () => {
      await rt?.stop();
    });

    it("asks no security of any operation, passes Redocly's recommended rules without a problem, and takes no forwarded header for servers nor 0.0.0.0", async () => {
      const { text, document } = await openApi(rt.url, { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.example' });
      const problems = await recommendedLint(text);
      expect(problems, listed(problems)).to.deep.equal([]);
      expect(document.components).not.to.have.property('securitySchemes');
      expect(document.paths['/api/reload'].post.security).to.deep.equal([]);
      expect(document.servers[0].url).to.equal(rt.url);
      const unspecified = await openApi(rt.url, { Host: `0.0.0.0:${rt.port}` });
      expect(unspecified.document.servers[0].url).to.equal(rt.url);
    });
  });
});
