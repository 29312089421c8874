// Over HTTP to rt in process: a component built from C the way real
// toolchains build them (clang + wasi-libc, WASI through the preview1
// adapter): the canonical ABI with malloc'd memory and post-return
// functions, and libc meeting the sandbox (fopen, getenv, stderr).

import { expect } from 'chai';
import { C_LIBC, repository } from '../support/fixtures.js';
import { InProcessRt } from '../support/in-process.js';
import { invoke } from '../support/rt-process.js';

describe('a C component on wasi-libc (in process)', function () {
  let rt: InProcessRt | undefined;

  before(async function () {
    this.timeout(300_000);
    // Without the toolchain the build fails, naming the packages to install (.ci/run installs them).
    const repo = await repository({
      libc: C_LIBC,
      'granted-libc.wasm': C_LIBC,
      'granted-libc.toml': { raw: 'service = "granted-libc"\n[env]\nGREETING = "hi"\n[[allowed_paths]]\nhost = "files"\nguest = "/data"\n' },
      'files/hello.txt': { raw: 'hello from the host\n' },
    });
    rt = await InProcessRt.start({ configToml: `repo_urls = ["file://${repo}"]` });
  });

  after(async () => {
    await rt?.stop();
  });

  it('takes and answers strings, lists, records, with libc allocating and post-return freeing', async () => {
    for (let i = 0; i < 3; i++) {
      // Repeated: memory the post-return functions failed to free, or freed twice, would show.
      expect((await invoke(rt!, 'acme/libc/invoke/shout', { text: 'héllo wörld' })).body).to.deep.equal({ result: 'HéLLO WöRLD!' });
    }
    expect((await invoke(rt!, 'acme/libc/invoke/sum', { values: [1, 2, 3, 4294967295] })).body).to.deep.equal({ result: 4294967301 });
    expect((await invoke(rt!, 'acme/libc/invoke/stats', { values: [1.5, 2.5, 5] })).body).to.deep.equal({ result: { count: 3, mean: 3 } });
    expect((await invoke(rt!, 'acme/libc/invoke/stats', { values: [] })).body).to.deep.equal({ result: { count: 0, mean: 0 } });
  });

  it('checks arguments before they reach the component', async () => {
    const res = await invoke(rt!, 'acme/libc/invoke/sum', { values: [1, -2] });
    expect(res.status).to.equal(400);
    expect(res.body.details).to.equal('values[1]: expected u32 (0..4294967295), got -2');
  });

  it('gives libc no host files and no host environment', async () => {
    const passwd = await invoke(rt!, 'acme/libc/invoke/read-file', { path: '/etc/passwd' });
    expect(passwd.status).to.equal(500);
    expect(passwd.body).to.include({ error: 'method returned an error', code: 'RT_ERR_METHOD_RETURNED_ERROR', service: 'acme.libc', method: 'read-file' });
    expect(passwd.body.details).to.match(/no such file|capabilities insufficient/i);
    expect((await invoke(rt!, 'acme/libc/invoke/env', { name: 'PATH' })).body).to.deep.equal({ result: null });
  });

  it('gives libc what its sidecar grants: a directory and a variable', async () => {
    expect((await invoke(rt!, 'acme/granted-libc/invoke/read-file', { path: '/data/hello.txt' })).body).to.deep.equal({ result: 'hello from the host\n' });
    expect((await invoke(rt!, 'acme/granted-libc/invoke/read-file', { path: '/data/../../etc/passwd' })).status).to.equal(500);
    expect((await invoke(rt!, 'acme/granted-libc/invoke/env', { name: 'GREETING' })).body).to.deep.equal({ result: 'hi' });
  });

  it("sends libc's stderr to the log under the service name", async () => {
    await invoke(rt!, 'acme/libc/invoke/shout', { text: 'log me' });
    expect(await rt!.logged((l) => l.service === 'acme.libc' && l.stream === 'stderr' && l.msg === 'shouted 6 bytes')).to.equal(true);
  });
});
