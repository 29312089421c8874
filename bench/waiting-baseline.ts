// What the waiting section holds rt's waiting calls against: a Koa route that
// waits as long as the body says (a timer), then answers. Its worker's memory
// while it holds them is what any Node server pays for the sockets and
// requests; rt's beyond it is its calls' and the guest's tasks'.

import Koa from 'koa';
import { clustered } from './baseline-cluster.js';

clustered((port) => {
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const { ns } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { ns: number };
    await new Promise((resolve) => setTimeout(resolve, ns / 1_000_000));
    ctx.body = { result: ns };
  });
  app.listen(port, '127.0.0.1');
});
