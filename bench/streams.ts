// Streamed answers (docs/api.md §5.1.1): rt on 1 worker serving the streaming
// test fixtures (STREAMS in componentize-js, DROPS in WAT) and the digits
// example (WAT), next to bare node:http (stream-baseline.ts, 1 worker too)
// writing the same items with backpressure. One client on loopback reads as
// fast as it can, counting bytes without keeping them; one stream at a time.
//
// 1. raw bytes: STREAMS bytes(total, chunk) at 1, 16 and 64 KiB chunks, MiB/s;
// 2. small items: STREAMS words(n) (text lines) and count(n, 0) (NDJSON
//    records), DROPS start(n, 0) (NDJSON numbers, from WAT), items/s;
// 3. time to first byte: a stream of one item vs a JSON invoke of the same
//    service, on one kept-alive connection, alternating.
//
// Every variant runs once per round, the order rotated each round; the
// tables show medians across rounds.

import { Agent, request } from 'node:http';
import { examples } from '../examples/index.js';
import { repository } from '../test/support/fixtures.js';
import { DROPS, STREAMS } from '../test/support/streaming-fixtures.js';
import { Cleanup, startAll, startBaseline, startRt } from './servers.js';
import { settings } from './settings.js';
import { printTable } from './table.js';
import { fixed, median, min, ratio } from './stats.js';

const MiB = 1 << 20;
const KiB = 1 << 10;

interface Read {
  status: number;
  bytes: number;
  /** The chunked body ended with its final chunk. */
  complete: boolean;
  /** ms from sending the request to its headers, its first body byte, its end. */
  headersMs: number;
  firstByteMs: number;
  totalMs: number;
  /** The first bytes of the body (for the checks before measuring). */
  head: Buffer;
}

/** POSTs `json` and reads the whole answer, counting its bytes and keeping only the first `keep`. */
function read(url: string, json: unknown, agent: Agent | false = false, keep = 0): Promise<Read> {
  const body = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const headersMs = performance.now() - started;
      let firstByteMs = NaN;
      let bytes = 0;
      const kept: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        if (bytes < keep) kept.push(c.subarray(0, keep - bytes));
        bytes += c.length;
      });
      res.once('error', reject);
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, bytes, complete: res.complete, headersMs, firstByteMs, totalMs: performance.now() - started, head: Buffer.concat(kept) }),
      );
    });
    req.once('error', reject);
    req.end(body);
  });
}

const pattern = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => i % 251));
const wordsText = (n: number) => Array.from({ length: n }, (_, i) => `word ${i}\n`).join('');
const countText = (n: number) => Array.from({ length: n }, (_, seq) => `${JSON.stringify({ seq, text: `item ${seq}` })}\n`).join('');
const ticksText = (n: number) => Array.from({ length: n }, (_, i) => `${i}\n`).join('');

/** A streamed read that must answer 200 with exactly `bytes` bytes and a final chunk. */
async function readAll(label: string, url: string, json: unknown, bytes: number): Promise<Read> {
  const r = await read(url, json);
  if (r.status !== 200 || r.bytes !== bytes || !r.complete) throw new Error(`${label}: ${url} answered ${r.status}, ${r.bytes} of ${bytes} bytes, ${r.complete ? 'complete' : 'cut short'}`);
  return r;
}

/** The first bytes of what `url` answers must be `expected` (checked once, before measuring). */
async function check(label: string, url: string, json: unknown, expected: Buffer | string): Promise<void> {
  const want = typeof expected === 'string' ? Buffer.from(expected) : expected;
  const r = await read(url, json, false, want.length + 1);
  if (r.status !== 200 || !r.complete || !r.head.equals(want)) throw new Error(`${label}: ${url} answered ${r.status} ${JSON.stringify(r.head.toString('latin1').slice(0, 200))}, expected ${JSON.stringify(want.toString('latin1').slice(0, 200))}`);
}

interface Variant {
  key: string;
  /** Its side: rt, or the node:http baseline. */
  side: 'rt' | 'baseline';
  url: string;
  json: unknown;
  bytes: number;
  items: number;
}

export async function streams(): Promise<void> {
  const { streamRounds: rounds, streamMiB, streamItems: n, streamTtfbRequests } = settings;
  const total = streamMiB * MiB;
  const cleanup = new Cleanup();
  try {
    const digits = examples.find((e) => e.name === 'digits')!;
    const repo = await repository({
      streams: STREAMS,
      drops: DROPS,
      'digits.wasm': await digits.source(),
      'digits.toml': { raw: '[media_types]\ne = "text/plain; charset=utf-8"\n' },
    });
    const [rt, base] = await startAll(cleanup, [
      startRt({ configToml: `repo_urls = ["file://${repo}"]\n[log]\nlevel = "warn"\n`, workers: 1, quiet: true }),
      startBaseline('stream-baseline.js', 1),
    ] as const);
    const rtUrl = (service: string, method: string) => `${rt.url}/api/services/${service}/invoke/${method}`;

    // What each side answers, checked once (with small sizes) before anything is measured.
    const sides = [
      ['rt', (m: string) => rtUrl(m === 'ticks' ? 'acme/drops' : 'acme/streams', m === 'ticks' ? 'start' : m)],
      ['baseline', (m: string) => `${base.url}/${m}`],
    ] as const;
    for (const [side, url] of sides) {
      await check(`${side} bytes`, url('bytes'), { total: 100_000, chunk: 1000 }, pattern(100_000));
      await check(`${side} words`, url('words'), { n: 1000 }, wordsText(1000));
      await check(`${side} count`, url('count'), { n: 1000, 'delay-ms': 0 }, countText(1000));
      await check(`${side} ticks`, url('ticks'), { n: 1000, 'delay-ms': 0 }, ticksText(1000));
    }
    await check('rt digits', rtUrl('example/digits', 'e'), { count: 20 }, '2.71828182845904523536');

    const DIGITS = 65_535; // e(count: u16): as many as it takes
    const digitsBytes = DIGITS + 2;
    const chunks = [1 * KiB, 16 * KiB, 64 * KiB];
    const byteVariants: Variant[] = chunks.flatMap((chunk) => [
      { key: `bytes ${chunk / KiB}k rt`, side: 'rt', url: rtUrl('acme/streams', 'bytes'), json: { total, chunk }, bytes: total, items: Math.ceil(total / chunk) },
      { key: `bytes ${chunk / KiB}k baseline`, side: 'baseline', url: `${base.url}/bytes`, json: { total, chunk }, bytes: total, items: Math.ceil(total / chunk) },
    ]);
    const itemVariants: Variant[] = (
      [
        ['words', 'words', 'acme/streams', { n }, wordsText(n).length],
        ['count', 'count', 'acme/streams', { n, 'delay-ms': 0 }, countText(n).length],
        ['ticks', 'start', 'acme/drops', { n, 'delay-ms': 0 }, ticksText(n).length],
      ] as const
    ).flatMap(([key, method, service, json, bytes]) => [
      { key: `${key} rt`, side: 'rt' as const, url: rtUrl(service, method), json, bytes, items: n },
      { key: `${key} baseline`, side: 'baseline' as const, url: `${base.url}/${key}`, json, bytes, items: n },
    ]);
    const digitsVariant: Variant = { key: 'digits rt', side: 'rt', url: rtUrl('example/digits', 'e'), json: { count: DIGITS }, bytes: digitsBytes, items: Math.ceil(digitsBytes / 4096) };
    const variants = [...byteVariants, ...itemVariants, digitsVariant];

    // First byte: a stream of one item and a JSON invoke of the same service, alternating on one connection.
    const firstByte = [
      { key: 'rt words(1), stream', url: rtUrl('acme/streams', 'words'), json: { n: 1 } },
      { key: 'rt stats(), JSON', url: rtUrl('acme/streams', 'stats'), json: {} },
      { key: 'rt DROPS start(1, 0), stream', url: rtUrl('acme/drops', 'start'), json: { n: 1, 'delay-ms': 0 } },
      { key: 'rt DROPS live(), JSON', url: rtUrl('acme/drops', 'live'), json: {} },
      { key: 'baseline words(1), stream', url: `${base.url}/words`, json: { n: 1 } },
      { key: 'baseline stats, JSON', url: `${base.url}/stats`, json: {} },
    ];
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanup.add(async () => agent.destroy());
    const perRound = Math.max(1, Math.round(streamTtfbRequests / rounds));

    // Warm-up (not counted): every variant once at a quarter of its size, and some first-byte requests.
    process.stderr.write(`streams: warming up ${variants.length} variants\n`);
    for (const v of variants) {
      if (v.key.startsWith('bytes')) await readAll(v.key, v.url, { ...(v.json as object), total: total / 4 }, total / 4);
      else await read(v.url, v.json);
    }
    for (let i = 0; i < 20; i++) for (const f of firstByte) await read(f.url, f.json, agent);

    const runs = new Map<string, Read[]>(variants.map((v) => [v.key, []]));
    const ttfb = new Map<string, Read[]>(firstByte.map((f) => [f.key, []]));
    const started = performance.now();
    for (let round = 0; round < rounds; round++) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length]);
      process.stderr.write(`streams: round ${round + 1}/${rounds}\n`);
      for (const v of order) runs.get(v.key)!.push(await readAll(v.key, v.url, v.json, v.bytes));
      for (let i = 0; i < perRound; i++) {
        for (let j = 0; j < firstByte.length; j++) {
          const f = firstByte[(i + j) % firstByte.length];
          const r = await read(f.url, f.json, agent);
          if (r.status !== 200 || !r.complete) throw new Error(`${f.key}: ${r.status}`);
          ttfb.get(f.key)!.push(r);
        }
      }
    }
    const seconds = (performance.now() - started) / 1000;

    const mibPerSec = (key: string) => median(runs.get(key)!.map((r) => r.bytes / MiB / (r.totalMs / 1000)));
    const itemsPerSec = (v: Variant) => median(runs.get(v.key)!.map((r) => v.items / (r.totalMs / 1000)));
    const perRoundOf = (key: string, f: (r: Read) => string | number) => runs.get(key)!.map(f).join(' / ');

    console.log(
      `\nstreams: raw bytes, ${streamMiB} MiB per stream (STREAMS bytes(total, chunk), componentize-js), one stream at a time, ` +
        `${rounds} interleaved rounds (medians); rt 1 worker, log warn; baseline: node:http, 1 worker, write + 'drain'`,
    );
    printTable(
      Object.fromEntries(
        chunks.map((chunk) => {
          const k = `${chunk / KiB}k`;
          const r = mibPerSec(`bytes ${k} rt`);
          const b = mibPerSec(`bytes ${k} baseline`);
          return [
            `${chunk / KiB} KiB chunks`,
            {
              'rt MiB/s': fixed(r, 1),
              'baseline MiB/s': fixed(b, 1),
              'rt / baseline': ratio(r, b),
              'rt items/s': Math.round((r * MiB) / chunk),
              'rt MiB/s per round': perRoundOf(`bytes ${k} rt`, (x) => fixed(x.bytes / MiB / (x.totalMs / 1000), 0)),
              'baseline per round': perRoundOf(`bytes ${k} baseline`, (x) => fixed(x.bytes / MiB / (x.totalMs / 1000), 0)),
            },
          ];
        }),
      ),
    );
    const d = runs.get(digitsVariant.key)!;
    console.log(
      `  digits e(${DIGITS}) (WAT, 4 KiB chunks, a spigot: compute-bound): ${fixed(median(d.map((r) => r.totalMs)), 0)} ms, ` +
        `first byte ${fixed(median(d.map((r) => r.firstByteMs)), 1)} ms, ${fixed(median(d.map((r) => digitsBytes / 1024 / (r.totalMs / 1000))), 0)} KiB/s`,
    );

    console.log(`\nstreams: small items, ${n} per stream, items/s (medians of ${rounds} rounds)`);
    const itemRows: [string, string][] = [
      ['words', 'STREAMS words(n): text lines (componentize-js)'],
      ['count', 'STREAMS count(n, 0): NDJSON records (componentize-js)'],
      ['ticks', 'DROPS start(n, 0): NDJSON numbers (WAT)'],
    ];
    printTable(
      Object.fromEntries(
        itemRows.map(([key, label]) => {
          const rv = itemVariants.find((v) => v.key === `${key} rt`)!;
          const bv = itemVariants.find((v) => v.key === `${key} baseline`)!;
          const r = itemsPerSec(rv);
          const b = itemsPerSec(bv);
          return [
            label,
            {
              'rt items/s': Math.round(r),
              'baseline items/s': Math.round(b),
              'rt / baseline': ratio(r, b),
              'rt µs/item': fixed(1e6 / r, 2),
              'rt MiB/s': fixed((rv.bytes / MiB) * (r / n), 1),
              'rt items/s per round': perRoundOf(rv.key, (x) => String(Math.round(n / (x.totalMs / 1000)))),
            },
          ];
        }),
      ),
    );

    console.log(`\nstreams: time to first byte, one kept-alive connection, requests alternating (medians of ${perRound * rounds} each)`);
    const t = (key: string, f: (r: Read) => number) => median(ttfb.get(key)!.map(f));
    printTable(
      Object.fromEntries(
        firstByte.map((f) => [
          f.key,
          {
            'headers ms': fixed(t(f.key, (r) => r.headersMs), 3),
            'first byte ms': fixed(t(f.key, (r) => r.firstByteMs), 3),
            'whole answer ms': fixed(t(f.key, (r) => r.totalMs), 3),
            'best first byte ms': fixed(min(ttfb.get(f.key)!.map((r) => r.firstByteMs)), 3),
          },
        ]),
      ),
    );

    console.log('\nratios');
    const fb = (key: string) => t(key, (r) => r.firstByteMs);
    printTable({
      ...Object.fromEntries(chunks.map((c) => [`rt / baseline, MiB/s, ${c / KiB} KiB chunks`, { ratio: ratio(mibPerSec(`bytes ${c / KiB}k rt`), mibPerSec(`bytes ${c / KiB}k baseline`)) }])),
      ...Object.fromEntries(
        itemRows.map(([key]) => [`rt / baseline, items/s, ${key}`, { ratio: ratio(itemsPerSec(itemVariants.find((v) => v.key === `${key} rt`)!), itemsPerSec(itemVariants.find((v) => v.key === `${key} baseline`)!)) }]),
      ),
      'rt first byte: stream / JSON (STREAMS)': { ratio: ratio(fb('rt words(1), stream'), fb('rt stats(), JSON')) },
      'rt first byte: stream / JSON (DROPS, WAT)': { ratio: ratio(fb('rt DROPS start(1, 0), stream'), fb('rt DROPS live(), JSON')) },
      'rt stream / baseline stream, first byte': { ratio: ratio(fb('rt words(1), stream'), fb('baseline words(1), stream')) },
    });
    console.log(`  (measured rounds took ${fixed(seconds, 1)} s)`);
  } finally {
    await cleanup.run();
  }
}
