// Sidecar validation: every key's wrong value answers with the file, the key and what was expected.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { readSidecar, SidecarError } from '../../lib/primary/sidecar.js';

describe('sidecar', () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rt-sidecar-'));
  });

  async function read(toml: string): Promise<unknown> {
    const wasm = join(dir, 'c.wasm');
    await writeFile(join(dir, 'c.toml'), toml);
    return readSidecar(wasm);
  }

  async function failure(toml: string): Promise<string> {
    try {
      await read(toml);
    } catch (e) {
      expect(e).to.be.instanceOf(SidecarError);
      return (e as Error).message;
    }
    throw new Error('expected the sidecar to be rejected');
  }

  it('reads every key', async () => {
    const sidecar = await read(
      'domain = "acme"\nservice = "svc"\nconfig = "conf/svc.json"\npool_size = 3\nmax_invocations = 10\ninstance_per_call = false\n[env]\nGREETING = "hi"\n[media_types]\nrender = "image/png"\n',
    );
    expect(sidecar).to.deep.equal({
      domain: 'acme',
      service: 'svc',
      config: 'conf/svc.json',
      pool_size: 3,
      max_invocations: 10,
      instance_per_call: false,
      env: { GREETING: 'hi' },
      media_types: { render: 'image/png' },
    });
  });

  it('is empty when there is no sidecar file', async () => {
    expect(await readSidecar(join(dir, 'none.wasm'))).to.deep.equal({});
  });

  const cases: [toml: string, message: RegExp][] = [
    ['pool_size = 0', /c\.toml: pool_size: expected an integer between 1 and 64, got 0$/],
    ['pool_size = 65', /pool_size: expected an integer between 1 and 64, got 65$/],
    ['pool_size = "2"', /pool_size: expected an integer between 1 and 64, got "2"$/],
    ['max_invocations = 1.5', /max_invocations: expected an integer between 1 and \d+, got 1.5$/],
    ['instance_per_call = "yes"', /instance_per_call: expected true or false, got "yes"$/],
    ['env = "A=1"', /env: expected a table of NAME = "value", got "A=1"$/],
    ['[env]\n"1BAD" = "x"', /env: "1BAD" is not a variable name$/],
    ['[env]\nA = 1', /env\.A: expected a string, got 1$/],
    ['media_types = 3', /media_types: expected a table of method = "media\/type", got 3$/],
    ['[media_types]\nrender = "png"', /media_types\.render: expected a media type such as "image\/png", got "png"$/],
    ['domain = "a b"', /domain: expected a name of letters, digits and dashes, got "a b"$/],
    ['config = 1', /config: expected the path of the configuration file, got 1$/],
    ['config = ""', /config: expected the path of the configuration file, got ""$/],
    ['colour = "red"', /unknown key "colour" \(known: domain, service, config, media_types, pool_size, max_invocations, instance_per_call, env\)$/],
    ['pool_size = ', /c\.toml: invalid TOML/],
  ];
  for (const [toml, message] of cases) {
    it(`rejects ${JSON.stringify(toml)}`, async () => {
      expect(await failure(toml)).to.match(message);
    });
  }
});
