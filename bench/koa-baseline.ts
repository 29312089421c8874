// The reference point for rt's invoke path: a bare Koa + @koa/router + koa-body
// route doing the same job (JSON in, add, JSON out) on the same number of
// cluster workers, without components.

import cluster from 'node:cluster';
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';

const port = Number(process.env.PORT);
const workers = Number(process.env.WORKERS ?? 2);

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  let online = 0;
  cluster.on('listening', () => {
    if (++online === workers) process.send?.('ready');
  });
  const shutdown = () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill();
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  // The benchmark went away without stopping this server: go too.
  process.on('disconnect', shutdown);
} else {
  const app = new Koa();
  const router = new Router();
  router.post('/add', koaBody(), (ctx) => {
    const { a, b } = ctx.request.body as { a: number; b: number };
    ctx.body = { result: a + b };
  });
  app.use(router.routes());
  app.listen(port, '127.0.0.1');
}
