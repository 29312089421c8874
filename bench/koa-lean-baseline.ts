// The reference point rt's targets are set against: what a performance-minded
// user writes with Koa. Koa + @koa/router like the design card's stack
// (koa-baseline.ts), but the body is read by hand (the request's chunks
// collected, then JSON.parse) instead of through koa-body, whose co-body,
// raw-body, inflation and type-is cost a good part of a request this small.
// rt reads its own bodies without koa-body too (lib/worker/http/body.ts, which
// also caps, decompresses and times them), so this is the fair comparison:
// the same job on the same framework, without a component.

import type { IncomingMessage } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { clustered } from './baseline-cluster.js';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

clustered((port) => {
  const app = new Koa();
  const router = new Router();
  router.post('/add', async (ctx) => {
    let args: { a: number; b: number };
    try {
      args = JSON.parse(await readBody(ctx.req)) as { a: number; b: number };
    } catch {
      ctx.status = 400;
      ctx.body = { error: 'bad JSON' };
      return;
    }
    ctx.body = { result: args.a + args.b };
  });
  app.use(router.routes());
  app.listen(port, '127.0.0.1');
});
