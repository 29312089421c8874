// A reference point for rt's invoke path: Koa + @koa/router + koa-body, the
// stack the design card names, doing the same job (JSON in, add, JSON out) on
// the same number of cluster workers, without components. The targets are
// set against the lean route (koa-lean-baseline.ts); this one shows what
// koa-body costs on top of it.

import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { clustered } from './baseline-cluster.js';

clustered((port) => {
  const app = new Koa();
  const router = new Router();
  router.post('/add', koaBody(), (ctx) => {
    const { a, b } = ctx.request.body as { a: number; b: number };
    ctx.body = { result: a + b };
  });
  app.use(router.routes());
  app.listen(port, '127.0.0.1');
});
