// The reference point for rt's invoke path: a bare Koa + @koa/router + koa-body
// route doing the same job (JSON in, add, JSON out) on the same number of
// cluster workers, without components.

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
