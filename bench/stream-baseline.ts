// The floor under rt's streamed answers: bare node:http (in a process of its
// own, WORKERS cluster workers like rt) writing the same items rt's streaming
// fixtures make, one `res.write` per item on a chunked answer, waiting for
// 'drain' whenever `write` answers false. Same request bodies as rt's invoke:
//
// POST /bytes {"total", "chunk"}  byte i = i % 251, in `chunk`-byte writes (application/octet-stream)
// POST /words {"n"}               "word 0\n" … "word <n-1>\n" (text/plain)
// POST /count {"n"}               NDJSON {"seq":i,"text":"item i"} (application/x-ndjson)
// POST /ticks {"n"}               NDJSON 0 … n-1 (the WAT DROPS fixture's items)
// POST /stats                     a small JSON answer, for time to first byte
// POST /echo                      the request body back as it arrives (piped: backpressure both ways)

import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { clustered } from './baseline-cluster.js';

/** The pattern, long enough that any chunk up to 1 MiB is a view into it (no copy, no loop per byte). */
const PATTERN = Buffer.alloc(251 + (1 << 20));
for (let i = 0; i < PATTERN.length; i++) PATTERN[i] = i % 251;

type Items = () => Buffer | string | undefined;

function items(route: string, args: Record<string, number>): Items | undefined {
  switch (route) {
    case '/bytes': {
      const total = args.total ?? 0;
      const chunk = args.chunk || total;
      let sent = 0;
      return () => {
        if (sent >= total) return undefined;
        const size = Math.min(chunk, total - sent);
        const start = sent % 251;
        sent += size;
        return PATTERN.subarray(start, start + size);
      };
    }
    case '/words': {
      let i = 0;
      const n = args.n ?? 0;
      return () => (i < n ? `word ${i++}\n` : undefined);
    }
    case '/count': {
      let seq = 0;
      const n = args.n ?? 0;
      return () => (seq < n ? `${JSON.stringify({ seq, text: `item ${seq++}` })}\n` : undefined);
    }
    case '/ticks': {
      let i = 0;
      const n = args.n ?? 0;
      return () => (i < n ? `${i++}\n` : undefined);
    }
  }
  return undefined;
}

const MEDIA: Record<string, string> = {
  '/bytes': 'application/octet-stream',
  '/words': 'text/plain; charset=utf-8',
  '/count': 'application/x-ndjson',
  '/ticks': 'application/x-ndjson',
};

async function stream(res: ServerResponse, next: Items): Promise<void> {
  for (let item = next(); item !== undefined; item = next()) {
    if (!res.write(item)) {
      await once(res, 'drain');
      if (res.destroyed) return;
    }
  }
  res.end();
}

clustered((port) => {
  createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/echo') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void req.pipe(res);
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      if (req.url === '/stats') {
        const answer = '{"result":{"nexts":0,"dropped":0}}';
        return void res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
      }
      let args: Record<string, number>;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, number>;
      } catch {
        return void res.writeHead(400).end();
      }
      const next = items(req.url ?? '', args);
      if (!next) return void res.writeHead(404).end();
      // Which worker answered, like rt's X-Rt-Worker: how the connections were spread over the workers.
      res.writeHead(200, { 'content-type': MEDIA[req.url!], 'cache-control': 'no-cache', 'x-baseline-worker': String(process.pid) });
      res.flushHeaders();
      res.on('close', () => res.emit('drain')); // a client that hangs up releases a writer waiting for 'drain'
      void stream(res, next);
    });
  }).listen(port, '127.0.0.1');
});
