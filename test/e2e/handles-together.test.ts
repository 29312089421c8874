// End to end: handles made on separate connections can be passed together,
// whichever workers the connections reached (docs/api.md §5.1.2): a
// service's handles live in one worker, their home
// (lib/worker/execution/handle-homes.ts). With 2 and 4 workers: six counters
// (WAT) made on every worker in turn merge pairwise and total together, and two
// carts of the cart example (componentize-js) made on separate connections
// merge, as the README shows. And `max_handles` holds exactly under
// concurrent constructors.

import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { expect } from 'chai';
import { examplesRepository, repository } from '../support/fixtures.js';
import { COUNTERS } from '../support/resource-fixtures.js';
import { RtProcess } from '../support/rt-process.js';
import { closeConnections, connectionsByWorker, sendOn } from '../support/worker-connections.js';

for (const workers of [2, 4]) {
  describe(`handles made on separate connections, ${workers} workers (e2e)`, function () {
    this.timeout(180_000);
    let rt: RtProcess;
    /** POST on a connection of its own, so that any worker may take it. */
    const fresh = async (path: string, body: unknown, scope?: string) => {
      const answer = await sendOn(new Agent({ keepAlive: false }), `${rt.url}/api/services/${path}`, 'POST', JSON.stringify(body), scope ? { 'rt-handle-scope': scope } : {});
      return { ...answer, json: JSON.parse(answer.body) as Record<string, unknown> };
    };
    const ref = (id: string) => ({ $handle: id });

    before(async function () {
      this.timeout(600_000);
      const [counters, examples] = [await repository({ counters: COUNTERS, 'bounded.wasm': COUNTERS, 'bounded.toml': { raw: 'service = "bounded"\nmax_handles = 20\npool_size = 2\n' } }), await examplesRepository()];
      rt = await RtProcess.start({ workers, configToml: `repo_urls = ["file://${counters}", "file://${examples}"]\n` });
      await rt.ready();
    });

    after(async () => {
      await rt?.stop();
    });

    for (const scope of [undefined, randomBytes(16).toString('hex')]) {
      it(`merges six counters made on every worker pairwise and totals them, with no 409 (${scope ? 'one named scope' : 'the default scope'})`, async () => {
        // Connections chosen by worker, so that each pair spans two workers
        // whichever way the kernel hands out fresh connections.
        const byWorker = await connectionsByWorker(rt.url, 1, workers);
        try {
          const agents = [...byWorker.values()].map(([agent]) => agent);
          const on = (i: number) => agents[i % agents.length];
          const send = async (i: number, path: string, body: unknown, headers: Record<string, string> = {}) => {
            const answer = await sendOn(on(i), `${rt.url}/api/services/${path}`, 'POST', JSON.stringify(body), headers);
            return { ...answer, json: JSON.parse(answer.body) as Record<string, unknown> };
          };
          const made: string[] = [];
          const makers = new Set<string>();
          for (let i = 0; i < 6; i++) {
            const answer = await send(i, 'acme/counters/resources/counter', { start: i + 1 }, scope ? { 'rt-handle-scope': scope } : {});
            expect(answer.status, answer.body).to.equal(201);
            makers.add(answer.worker);
            made.push(answer.json.handle as string);
          }
          expect(makers.size, 'counters made on several workers').to.equal(Math.min(workers, 6));
          for (let i = 0; i + 1 < made.length; i++) {
            const merged = await send(i + 1, 'acme/counters/invoke/counter.merge', { a: ref(made[i]), b: ref(made[i + 1]) });
            expect(merged.status, merged.body).to.equal(200);
          }
          const total = await send(5, 'acme/counters/invoke/total', { all: made.map(ref) });
          expect(total.status, total.body).to.equal(200);
          expect(total.json.result).to.equal(21);
        } finally {
          closeConnections(byWorker);
        }
      });
    }

    it('keeps max_handles exact under 64 concurrent constructors, on instance threads: 20 made in one instance, the others 503', async () => {
      const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => fresh('acme/bounded/resources/counter', { start: i })));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201), statuses.join(' ')).to.have.length(20);
      expect(statuses.filter((s) => s === 503)).to.have.length(44);
      expect(answers.find((a) => a.status === 503)!.json).to.include({ code: 'RT_ERR_TOO_MANY_HANDLES' });
      const listed = (await (await fetch(`${rt.url}/api/services/acme/bounded/handles`)).json()) as { handles: unknown[] };
      expect(listed.handles).to.have.length(20);
      // On instance threads (pool_size 2) too, they were all made in one instance.
      const made = answers.filter((a) => a.status === 201).map((a) => ref(a.json.handle as string));
      const total = await fresh('acme/bounded/invoke/total', { all: made });
      expect(total.status, total.body).to.equal(200);
    });

    for (const scope of [undefined, randomBytes(16).toString('base64url')]) {
      it(`merges two carts made on separate connections (the README lines), ${scope ? 'in a named scope' : 'in the default scope'}`, async () => {
        const carts: string[] = [];
        for (const currency of ['EUR', 'EUR']) {
          const made = await fresh('example/cart/resources/cart', { currency }, scope);
          expect(made.status, made.body).to.equal(201);
          carts.push(made.json.handle as string);
          const added = await fresh(`example/cart/handles/${carts.at(-1)}/invoke/add`, { sku: 'apple', quantity: 2, 'unit-price-cents': 40 });
          expect(added.status, added.body).to.equal(200);
        }
        const merged = await fresh('example/cart/invoke/cart.merge', { a: ref(carts[0]), b: ref(carts[1]) });
        expect(merged.status, merged.body).to.equal(200);
        const total = await fresh(`example/cart/handles/${(merged.json.result as { $handle: string }).$handle}/invoke/total`, {});
        expect(total.json.result).to.deep.equal({ currency: 'EUR', cents: 160 });
      });
    }
  });
}
