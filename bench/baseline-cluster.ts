// The cluster both baselines run in, like rt: WORKERS workers sharing PORT.
// The primary tells the benchmark when every worker listens, and goes (with
// its workers) on SIGTERM or when the benchmark itself is gone.

import cluster from 'node:cluster';

export function clustered(serve: (port: number) => void): void {
  const port = Number(process.env.PORT);
  const workers = Number(process.env.WORKERS ?? 2);
  if (!cluster.isPrimary) return serve(port);
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
  process.on('disconnect', shutdown);
}
