// End to end: handle ids stay private (docs/api.md §5.1.2). An id is a
// capability: whoever has it can use the handle. The listing shows ids
// shortened, whole only to a request with the control token, and not at all
// to a page of a foreign origin. Replays the hijack that a listing of whole
// ids allowed: list, then use another client's handle. Two workers, the
// handles made through each.

import { expect } from 'chai';
import type { Agent } from 'node:http';
import { repository } from '../support/fixtures.js';
import { COUNTERS } from '../support/resource-fixtures.js';
import { call, RtProcess, type JsonResponse } from '../support/rt-process.js';
import { closeConnections, connectionsByWorker, sendOn } from '../support/worker-connections.js';

const TOKEN = 'correct horse battery staple';
const FOREIGN = 'https://evil.example';

interface Listed {
  handle: string;
  worker: number;
}

describe('private handle ids (e2e)', function () {
  this.timeout(120_000);
  let rt: RtProcess;
  let byWorker: Map<string, Agent[]>;
  const base = () => `${rt.url}/api/services/acme/counters`;
  const list = (headers: Record<string, string> = {}) => call(`${base()}/handles`, { method: 'GET', headers });
  const handles = (answer: JsonResponse) => {
    expect(answer.status, answer.text).to.equal(200);
    return answer.body.handles as Listed[];
  };
  /** A counter made on `worker`'s connection: its whole id, as only its maker knows it. */
  const counter = async (worker: string, start: number) => {
    const made = await sendOn(byWorker.get(worker)![0], `${base()}/resources/counter`, 'POST', JSON.stringify({ start }));
    expect(made.status, made.body).to.equal(201);
    return (JSON.parse(made.body) as { handle: string }).handle;
  };
  const value = (id: string) => call(`${base()}/handles/${encodeURIComponent(id)}/invoke/value`);

  before(async function () {
    this.timeout(300_000);
    const repo = await repository({ counters: COUNTERS });
    rt = await RtProcess.start({ workers: 2, configToml: `repo_urls = ["file://${repo}"]\n[http.control]\ntoken = "${TOKEN}"\n` });
    await rt.ready();
    byWorker = await connectionsByWorker(rt.url, 1);
  });

  after(async () => {
    if (byWorker) closeConnections(byWorker);
    await rt?.stop();
  });

  it("does not let a client that lists the handles use another client's (the hijack, replayed)", async () => {
    const victims = await Promise.all([...byWorker.keys()].map((worker, i) => counter(worker, 10 + i)));
    const listed = handles(await list());
    for (const id of victims) {
      const entry = listed.find((h) => id.startsWith(h.handle.slice(0, -1)));
      expect(entry, `${id} listed, shortened`).to.not.equal(undefined);
      expect(entry!.handle.endsWith('…')).to.equal(true);
      expect(entry!.handle.length - 1, 'its first characters only').to.be.at.least(8).and.below(id.length / 2);
    }
    for (const { handle } of listed) {
      for (const guess of [handle, handle.slice(0, -1)]) {
        const taken = await value(guess);
        expect(taken.status, taken.text).to.equal(404);
        expect(taken.body.code).to.equal('RT_ERR_UNKNOWN_HANDLE');
        expect((await call(`${base()}/handles/${encodeURIComponent(guess)}`, { method: 'DELETE' })).status).to.equal(404);
      }
    }
    for (const [i, id] of victims.entries()) expect((await value(id)).body.result, 'the victims keep their counters').to.equal(10 + i);
  });

  it('lists whole ids to a request with the control token, asked on either worker', async () => {
    const made = await Promise.all([...byWorker.keys()].map((worker) => counter(worker, 0)));
    for (const worker of byWorker.keys()) {
      const answer = await sendOn(byWorker.get(worker)![0], `${base()}/handles`, 'GET', undefined, { authorization: `Bearer ${TOKEN}` });
      expect(answer.status, answer.body).to.equal(200);
      const ids = (JSON.parse(answer.body) as { handles: Listed[] }).handles.map((h) => h.handle);
      expect(ids, `asked on worker ${worker}`).to.include.members(made);
    }
  });

  it('answers 401 to a wrong token, and 403 to a page of a foreign origin, token or not, with no CORS header for it', async () => {
    const wrong = await list({ authorization: 'Bearer horse' });
    expect(wrong.status, wrong.text).to.equal(401);
    expect(wrong.body.code).to.equal('RT_ERR_UNAUTHORIZED');
    const pages: Record<string, string>[] = [{ origin: FOREIGN }, { origin: FOREIGN, authorization: `Bearer ${TOKEN}` }, { 'sec-fetch-site': 'cross-site' }];
    for (const headers of pages) {
      const refused = await list(headers);
      expect(refused.status, refused.text).to.equal(403);
      expect(refused.body.code).to.equal('RT_ERR_FORBIDDEN');
      expect(refused.body.details).to.match(/^the listing of handles is refused from/);
      expect(refused.body.handles).to.equal(undefined);
      expect(refused.headers.get('access-control-allow-origin'), JSON.stringify(headers)).to.equal(null);
    }
    // rt's own pages (the console) list them, shortened without the token.
    const own = handles(await list({ origin: `http://127.0.0.1:${rt.port}`, 'sec-fetch-site': 'same-origin' }));
    expect(own.every((h) => h.handle.endsWith('…'))).to.equal(true);
  });

  it('lets a page that http.cors allows drop a handle it made (DELETE follows the CORS of handle calls)', async () => {
    const id = await counter([...byWorker.keys()][0], 1);
    const dropped = await call(`${base()}/handles/${id}`, { method: 'DELETE', headers: { origin: FOREIGN } });
    expect(dropped.status, dropped.text).to.equal(204);
    expect(dropped.headers.get('access-control-allow-origin')).to.equal('*');
    expect((await value(id)).status).to.equal(410);
  });
});
