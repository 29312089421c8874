// The README's "Calling components" section, run: every curl line against rt
// serving the bundled examples (npm start's configuration), in order, each
// answer checked against the `# {...}` line after it where there is one (for
// an NDJSON stream: its first line), or the `# > text` line that a text
// answer starts with. A README that drifts from what rt does fails here.
// A line `NAME=$(curl ... | filter)` keeps what the shell would: its answer
// goes through the filter (run by sh), and later lines' `$NAME` is that.
// On a Node without JSPI (22) the WASI 0.3 example is listed as failed,
// naming the line it needs: its lines answer 404 naming the service.

import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { hasJspi } from '../../lib/platform.js';
import { examplesRepository } from '../support/fixtures.js';
import { RtProcess } from '../support/rt-process.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

interface CurlLine {
  command: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** `-o`: the answer is a file (checked to be a PNG, the only one the section writes). */
  output?: string;
  /** `-N`: a streamed answer, which must come in pieces, the first well before the end. */
  streamed?: boolean;
  /** The `# {...}` line after the command: the answer's JSON (an NDJSON stream's first item), or a part of it when it ends in `...}`. */
  expected?: string;
  /** The `# > text` line after the command: what the (text or NDJSON) answer starts with. */
  startsWith?: string;
  /** `NAME=$(curl ... | filter)`: the variable that keeps the answer, put through the shell command `filter`. */
  capture?: { name: string; filter: string };
}

/** A README line as written: the curl command (its `$NAME`s expanded when it runs), and what follows it. */
type ReadmeLine = Omit<CurlLine, 'method' | 'url' | 'headers'>;

/** The shell variables the README's lines have set. */
type Variables = Map<string, string>;

const CAPTURE = /^([A-Za-z_]\w*)=\$\((curl .*?) \| (.+)\)$/;

/**
 * The words of a shell command line: runs of single-quoted strings and bare
 * text (`'{"a":"'$H'"}'` is one word), the bare text's `$NAME`s expanded
 * (all the README uses).
 */
function words(line: string, variables: Variables): string[] {
  const expand = (word: string) =>
    word.replace(/\$(\w+)/g, (_, name: string) => {
      const value = variables.get(name);
      if (value === undefined) throw new Error(`the README's line uses $${name}, which no line before it set: ${line}`);
      return value;
    });
  return [...line.matchAll(/(?:'[^']*'|[^\s'])+/g)].map(([word]) => [...word.matchAll(/'([^']*)'|([^']+)/g)].map((m) => m[1] ?? expand(m[2])).join(''));
}

function parseCurl({ command, ...line }: ReadmeLine, variables: Variables): CurlLine {
  const args = words(command, variables).slice(1);
  const curl: CurlLine = { ...line, command, method: '', url: '', headers: {} };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '-X') curl.method = args[++i]!;
    else if (arg === '-H') {
      const [name, ...value] = args[++i].split(':');
      curl.headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (arg === '-d') curl.body = args[++i]!;
    else if (arg === '-o') curl.output = args[++i]!;
    else if (arg.startsWith('localhost:')) curl.url = arg.slice(arg.indexOf('/'));
    else if (arg === '-N') curl.streamed = true;
    else if (arg === '-s') continue; // silent: no progress meter, the same answer
    else throw new Error(`the README's curl line uses ${arg}, which this test does not know: ${command}`);
  }
  curl.method ||= curl.body === undefined ? 'GET' : 'POST';
  // curl's default for -d: a form body.
  if (curl.body !== undefined) curl.headers['content-type'] ??= 'application/x-www-form-urlencoded';
  return curl;
}

async function curlLines(): Promise<ReadmeLine[]> {
  const text = await readFile(README, 'utf8');
  const start = text.indexOf('## Calling components');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].replace(/\\\n\s*/g, ' ').split('\n'));
  const found: ReadmeLine[] = [];
  const variables: Variables = new Map();
  lines.forEach((line, i) => {
    const captured = CAPTURE.exec(line);
    if (!line.startsWith('curl ') && !captured) return;
    const next = lines[i + 1] ?? '';
    const readme: ReadmeLine = captured ? { command: captured[2], capture: { name: captured[1], filter: captured[3] } } : { command: line };
    if (next.startsWith('# {')) readme.expected = next.slice(2);
    if (next.startsWith('# > ')) readme.startsWith = next.slice(4);
    // Parsed now to fail early on an option the test does not know; expanded when it runs.
    if (readme.capture) variables.set(readme.capture.name, 'x');
    parseCurl(readme, variables);
    found.push(readme);
  });
  return found;
}

describe('README examples (e2e)', function () {
  let rt: RtProcess;

  before(async function () {
    this.timeout(300_000);
    rt = await RtProcess.start({ configToml: `repo_urls = ["file://${await examplesRepository()}"]`, workers: 2 });
    await rt.ready();
  });

  after(async () => {
    await rt?.stop();
  });

  it('answers every curl line of "Calling components" as the README says', async function () {
    this.timeout(120_000);
    const readmeLines = await curlLines();
    expect(readmeLines.length).to.be.at.least(20);
    const variables: Variables = new Map();
    const listing = (await (await fetch(`${rt.url}/api/services`)).json()) as { failed: { source: string; error: string }[] };
    // The services that did not load for want of JSPI, as their paths name them (the examples' domain is `example`).
    const unloadable = new Set(listing.failed.filter((f) => f.error.includes('needs JSPI')).map((f) => `example/${basename(f.source, '.wasm')}`));
    expect(listing.failed.length, JSON.stringify(listing.failed)).to.equal(unloadable.size);
    expect(unloadable.size > 0, 'WASI 0.3 examples listed as failed').to.equal(!hasJspi);
    let refused = 0;
    for (const readme of readmeLines) {
      const line = parseCurl(readme, variables);
      const started = performance.now();
      const res = await fetch(`${rt.url}${line.url}`, { method: line.method, headers: line.headers, body: line.body });
      const pieces: { at: number; bytes: Uint8Array }[] = [];
      // Node's web streams are async iterable (its DOM typings do not say so).
      for await (const piece of (res.body ?? []) as unknown as AsyncIterable<Uint8Array>) pieces.push({ at: performance.now() - started, bytes: piece });
      const bytes = Buffer.concat(pieces.map((p) => p.bytes));
      const service = /^\/api\/services\/([^/]+\/[^/]+)\//.exec(line.url)?.[1];
      if (service && unloadable.has(service)) {
        expect(res.status, line.command).to.equal(404);
        expect(JSON.parse(bytes.toString()), line.command).to.include({ code: 'RT_ERR_UNKNOWN_SERVICE', service: service.replace('/', '.') });
        refused++;
        continue;
      }
      if (line.streamed) {
        expect(res.headers.get('transfer-encoding'), line.command).to.equal('chunked');
        expect(pieces.length, `${line.command}: pieces`).to.be.at.least(2);
        expect(pieces.at(-1)!.at - pieces[0].at, `${line.command}: the first piece came well before the last`).to.be.above(100);
      }
      if (line.capture) {
        expect(res.status, `${line.command}\n${bytes.toString()}`).to.be.below(400);
        const filtered = spawnSync('sh', ['-c', line.capture.filter], { input: bytes, encoding: 'utf8' });
        expect(filtered.status, `${line.capture.filter}: ${filtered.stderr}`).to.equal(0);
        const value = filtered.stdout.replace(/\n$/, '');
        expect(value, `${line.capture.name} from ${bytes.toString()}`).to.match(/^\S+$/);
        variables.set(line.capture.name, value);
        continue;
      }
      if (line.output) {
        expect(res.status, line.command).to.equal(200);
        expect([...bytes.subarray(0, 8)], line.command).to.deep.equal([137, 80, 78, 71, 13, 10, 26, 10]);
        continue;
      }
      if (line.startsWith !== undefined) {
        expect(res.headers.get('content-type'), line.command).to.match(/^(?:text\/plain|application\/x-ndjson)/);
        expect(bytes.toString().slice(0, line.startsWith.length), line.command).to.equal(line.startsWith);
        continue;
      }
      if (line.expected === undefined) {
        expect(res.status, `${line.command}\n${bytes.toString()}`).to.be.below(400);
        continue;
      }
      const ndjson = res.headers.get('content-type') === 'application/x-ndjson';
      const answer = JSON.parse(ndjson ? bytes.toString().split('\n')[0] : bytes.toString()) as Record<string, unknown>;
      if (line.expected.endsWith(',...}')) {
        expect(answer, line.command).to.deep.include(JSON.parse(`${line.expected.slice(0, -',...}'.length)}}`));
      } else {
        expect(answer, line.command).to.deep.equal(JSON.parse(line.expected));
      }
      expect(res.status >= 400, line.command).to.equal('error' in answer);
    }
    expect(refused > 0, 'lines of a service this Node cannot load').to.equal(!hasJspi);
  });
});
