// The README's "Calling components" section, run: every curl line against rt
// serving the bundled examples (npm start's configuration), in order, each
// answer checked against the `# {...}` line after it where there is one (for
// an NDJSON stream: its first line), or the `# > text` line that a text
// answer starts with. A README that drifts from what rt does fails here.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
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
  /** The `# > text` line after the command: what the (text) answer starts with. */
  startsWith?: string;
}

/** The words of a shell command line: single-quoted strings and bare words (all the README uses). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

function parseCurl(command: string): CurlLine {
  const args = words(command).slice(1);
  const curl: CurlLine = { command, method: '', url: '', headers: {} };
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
    else throw new Error(`the README's curl line uses ${arg}, which this test does not know: ${command}`);
  }
  curl.method ||= curl.body === undefined ? 'GET' : 'POST';
  // curl's default for -d: a form body.
  if (curl.body !== undefined) curl.headers['content-type'] ??= 'application/x-www-form-urlencoded';
  return curl;
}

async function curlLines(): Promise<CurlLine[]> {
  const text = await readFile(README, 'utf8');
  const start = text.indexOf('## Calling components');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].replace(/\\\n\s*/g, ' ').split('\n'));
  const found: CurlLine[] = [];
  lines.forEach((line, i) => {
    if (!line.startsWith('curl ')) return;
    const next = lines[i + 1] ?? '';
    const curl = parseCurl(line);
    if (next.startsWith('# {')) curl.expected = next.slice(2);
    if (next.startsWith('# > ')) curl.startsWith = next.slice(4);
    found.push(curl);
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
    const lines = await curlLines();
    expect(lines.length).to.be.at.least(20);
    for (const line of lines) {
      const started = performance.now();
      const res = await fetch(`${rt.url}${line.url}`, { method: line.method, headers: line.headers, body: line.body });
      const pieces: { at: number; bytes: Uint8Array }[] = [];
      // Node's web streams are async iterable (its DOM typings do not say so).
      for await (const piece of (res.body ?? []) as unknown as AsyncIterable<Uint8Array>) pieces.push({ at: performance.now() - started, bytes: piece });
      const bytes = Buffer.concat(pieces.map((p) => p.bytes));
      if (line.streamed) {
        expect(res.headers.get('transfer-encoding'), line.command).to.equal('chunked');
        expect(pieces.length, `${line.command}: pieces`).to.be.at.least(2);
        expect(pieces.at(-1)!.at - pieces[0].at, `${line.command}: the first piece came well before the last`).to.be.above(100);
      }
      if (line.output) {
        expect(res.status, line.command).to.equal(200);
        expect([...bytes.subarray(0, 8)], line.command).to.deep.equal([137, 80, 78, 71, 13, 10, 26, 10]);
        continue;
      }
      if (line.startsWith !== undefined) {
        expect(res.headers.get('content-type'), line.command).to.match(/^text\/plain/);
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
  });
});
