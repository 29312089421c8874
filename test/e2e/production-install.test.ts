// The container image, checked without Docker (no engine runs here): the
// Dockerfile's runtime stage is replayed in a temporary directory — the
// project packed as the build stage packs it, installed by the same
// docker/install-runtime.sh (production dependencies only, from the npm
// registry, through an npm cache kept with the shared test cache), started
// with the stage's CMD, ENV and nothing else but a port — and it must serve a
// bundled example and the console, and pass its HEALTHCHECK. The first start
// transpiles the JavaScript examples with a fresh cache, as a new container
// does: about 50-80 s in all on a 2-core machine (plus the download of the
// production dependencies, ~70 MB, on a run that finds no npm cache).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cp, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { buildExamples } from '../../examples/index.js';
import { argsOf, envOf, execForm, onlyArgs, parseDockerfile, type Stage } from '../support/dockerfile.js';
import { eventually, StopWaiting } from '../support/eventually.js';
import { call, freePort, tempDir, TEST_CACHE_DIR } from '../support/rt-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const INSTALL_SCRIPT = 'docker/install-runtime.sh';

interface Stages {
  build: Stage;
  runtime: Stage;
}

async function stages(): Promise<Stages> {
  const all = parseDockerfile(await readFile(join(ROOT, 'Dockerfile'), 'utf8'));
  const build = all.find((s) => / AS build$/i.test(s.from));
  if (!build || all.length !== 2) throw new Error('Dockerfile: expected a build stage (AS build) and a runtime stage');
  return { build, runtime: all.at(-1)! };
}

/** The arguments the runtime stage runs install-runtime.sh with: package, lockfile, app directory, components directory. */
function installArgs(runtime: Stage): string[] {
  const commands = argsOf(runtime, 'RUN').flatMap((run) => run.split('&&').map((c) => c.trim().split(/\s+/)));
  const runs = (words: string[]) => (words[0] === 'sh' ? words.slice(1) : words)[0]?.endsWith('/install-runtime.sh');
  const install = commands.filter(runs);
  expect(install, `the runtime stage runs ${INSTALL_SCRIPT} once`).to.have.length(1);
  return install[0].slice(install[0][0] === 'sh' ? 2 : 1);
}

/**
 * The environment of the npm commands: this process's, without the npm
 * settings `npm test` puts there; an npm cache kept across runs beside the
 * component builds (the install is quick once it has the packages), and no
 * log files.
 */
function npmEnv(): Record<string, string> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^npm_/i.test(e[0])));
  // npm 11 keeps a compile cache of its own modules in the temporary directory unless told not to.
  return { ...env, npm_config_cache: join(TEST_CACHE_DIR, 'npm'), npm_config_prefer_offline: 'true', npm_config_logs_max: '0', npm_config_update_notifier: 'false', NODE_DISABLE_COMPILE_CACHE: '1' };
}

/** Every file under `dir` with its size and modification time: to see that nothing was written there. */
async function snapshot(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { recursive: true })).sort();
  return Promise.all(names.map(async (name) => {
    const s = await stat(join(dir, name));
    return `${name} ${s.size} ${s.mtimeMs}`;
  }));
}

async function waitReady(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new StopWaiting(`it exited (${child.exitCode})`);
      const res = await fetch(`${url}/api/ready`).catch(() => undefined);
      return res?.status === 200;
    },
    { what: 'the installed rt to become ready', timeoutMs, intervalMs: 200, context: () => `output:\n${output()}` },
  );
}

describe('production install: the Dockerfile runtime stage, outside Docker (e2e)', function () {
  let build: Stage;
  let runtime: Stage;

  before(async () => {
    ({ build, runtime } = await stages());
  });

  describe('the Dockerfile', () => {
    it('builds without the tests and benchmarks: its COPYs leave them out, its tsconfig compiles lib/ and examples/ only', async () => {
      const copied = argsOf(build, 'COPY').flatMap((a) => a.split(/\s+/).slice(0, -1));
      expect(copied).to.not.include.members(['test', 'bench', '.']);
      const compile = argsOf(build, 'RUN').find((r) => r.includes('tsc -p'));
      const tsconfig = /tsc -p (\S+)/.exec(compile ?? '')?.[1];
      expect(tsconfig, 'the build stage compiles with its own tsconfig').to.equal('tsconfig.image.json');
      const { include } = JSON.parse(await readFile(join(ROOT, tsconfig!), 'utf8')) as { include: string[] };
      expect(include).to.deep.equal(['lib/**/*.ts', 'examples/**/*.ts']);
    });

    it(`installs with ${INSTALL_SCRIPT}, the script this test runs`, () => {
      expect(argsOf(runtime, 'COPY').some((a) => a.split(/\s+/).includes(INSTALL_SCRIPT)), `COPY ${INSTALL_SCRIPT}`).to.equal(true);
      const [, , app, components] = installArgs(runtime);
      expect(installArgs(runtime)).to.have.length(4);
      expect(onlyArgs(runtime, 'WORKDIR'), 'rt starts in the app directory').to.equal(app);
      expect(envOf(runtime).RT__REPO_URLS, 'the default repository is the components directory').to.equal(`file://${components}`);
    });

    it('builds and runs on one slim Node image of the Active LTS line (26), which the floor of package.json admits', async () => {
      const image = build.from.replace(/\s+AS\s+build$/i, '');
      expect(runtime.from, 'both stages on the same image').to.equal(image);
      const m = /^node:(\d+)-[a-z]+-slim$/.exec(image);
      expect(m, image).to.not.equal(null);
      expect(Number(m![1])).to.equal(26);
      const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
      expect(Number(/^>=(\d+)/.exec(pkg.engines.node)![1])).to.be.at.most(Number(m![1]));
    });

    it('runs as a non-root user, exposes 9481, and keeps the cache and data directories in volumes that user owns', () => {
      const user = onlyArgs(runtime, 'USER');
      expect(user).to.not.match(/^(root|0)(:|$)/);
      expect(onlyArgs(runtime, 'EXPOSE')).to.equal('9481');
      const env = envOf(runtime);
      const volumes = JSON.parse(onlyArgs(runtime, 'VOLUME')) as string[];
      expect(volumes).to.have.members([env.RT_CACHE_DIR, env.RT_DATA_DIR]);
      const runs = argsOf(runtime, 'RUN').join(' && ');
      expect(runs).to.include(`chown ${user}:${user} ${env.RT_CACHE_DIR} ${env.RT_DATA_DIR}`);
    });

    it('is configured through RT__ variables only, and checks its health with bin/healthcheck.js', () => {
      const nonRt = Object.keys(envOf(runtime)).filter((k) => !k.startsWith('RT__'));
      // The directories are not configuration keys (docs/decisions.md: RT_CACHE_DIR, RT_DATA_DIR).
      expect(nonRt).to.have.members(['NODE_ENV', 'RT_CACHE_DIR', 'RT_DATA_DIR']);
      expect(execForm(onlyArgs(runtime, 'HEALTHCHECK'))).to.deep.equal(['node', 'bin/healthcheck.js']);
      expect(execForm(onlyArgs(runtime, 'CMD'))).to.deep.equal(['node', 'bin/rt.js', 'start']);
    });
  });

  describe('a clean production install of the packed project', () => {
    let dir: string;
    let packed: string[];
    /** Where each of the image's directories is, here. */
    const local = new Map<string, string>();
    let rt: ChildProcess | undefined;

    const inImage = (value: string) => [...local].reduce((v, [image, here]) => v.replaceAll(image, here), value);

    before(async function () {
      this.timeout(300_000);
      dir = await tempDir('rt-production-');
      // The build stage's sources: the compiled dist/ (npm test compiled it and bundled the
      // console; all of it, so that the package's `files` have test and bench output to leave
      // out) and the examples, built.
      const project = join(dir, 'project');
      await mkdir(project);
      for (const entry of ['package.json', 'README.md', 'bin', 'dist', 'lib', 'test', 'bench']) await cp(join(ROOT, entry), join(project, entry), { recursive: true });
      await buildExamples(join(project, 'examples', 'build'));
      const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: project, encoding: 'utf8', env: npmEnv() });
      expect(pack.status, pack.stderr).to.equal(0);
      const [{ filename, files }] = JSON.parse(pack.stdout) as [{ filename: string; files: { path: string }[] }];
      packed = files.map((f) => f.path);

      const env = envOf(runtime);
      const [, , app, components] = installArgs(runtime);
      for (const [image, here] of [[app, 'app'], [components, 'components'], [env.RT_CACHE_DIR, 'cache'], [env.RT_DATA_DIR, 'data']] as const) local.set(image, join(dir, here));
      const install = spawnSync('sh', [join(ROOT, INSTALL_SCRIPT), join(dir, filename), join(ROOT, 'package-lock.json'), inImage(app), inImage(components)], {
        encoding: 'utf8',
        env: npmEnv(),
      });
      expect(install.status, `${install.stdout}\n${install.stderr}`).to.equal(0);
    });

    after(async () => {
      if (rt && rt.exitCode === null) rt.kill('SIGKILL');
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('packs the runtime only: bin/, dist/lib/ without the component builder or source maps, the console, and the built examples', () => {
      expect(packed).to.include.members(['bin/rt.js', 'bin/healthcheck.js', 'bin/rt-reload-all.js', 'dist/lib/cli.js', 'dist/lib/worker/main.js', 'dist/console/index.html', 'examples/build/greeter.wasm']);
      const shipped = /^(package\.json|README\.md|bin\/[^/]+\.js|dist\/lib\/.*\.js|dist\/console\/[^/]+|examples\/build\/.+)$/;
      const outside = packed.filter((p) => !shipped.test(p) || p.includes('builder'));
      expect(outside).to.deep.equal([]);
    });

    it('installs the production dependencies and no development ones', async () => {
      const modules = join(local.get(onlyArgs(runtime, 'WORKDIR'))!, 'node_modules');
      const has = async (name: string) => (await stat(join(modules, name)).catch(() => undefined)) !== undefined;
      for (const name of ['@bytecodealliance/jco-transpile', '@bytecodealliance/preview2-shim', 'koa', 'binaryen']) expect(await has(name), name).to.equal(true);
      // The jco CLI and componentize-js build components; rt only transpiles them (jco-transpile).
      for (const name of ['@bytecodealliance/jco', '@bytecodealliance/componentize-js', 'typescript', 'mocha', 'chai', 'autocannon', 'kubernetes-models']) expect(await has(name), name).to.equal(false);
    });

    it('starts with the image settings alone, serves the bundled examples and the console, passes its health check, and writes only to its volumes', async function () {
      this.timeout(300_000);
      const app = local.get(onlyArgs(runtime, 'WORKDIR'))!;
      const components = join(dir, 'components');
      const before = { app: await snapshot(app), components: await snapshot(components) };
      const port = await freePort();
      // The image's ENV, a port, one worker; HOME empty (no user config file), nothing from this process.
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: join(dir, 'home'),
        ...Object.fromEntries(Object.entries(envOf(runtime)).map(([k, v]) => [k, inImage(v)])),
        RT__HTTP__PORT: String(port),
        RT__HTTP__HOST: '127.0.0.1',
        RT__WORKERS: '1',
      };
      const [, ...startArgs] = execForm(onlyArgs(runtime, 'CMD'));
      const [, ...healthArgs] = execForm(onlyArgs(runtime, 'HEALTHCHECK'));
      const healthcheck = () => spawnSync(process.execPath, healthArgs, { cwd: app, env, encoding: 'utf8', timeout: 30_000 });

      let output = '';
      const child = spawn(process.execPath, startArgs, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
      rt = child;
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const url = `http://127.0.0.1:${port}`;
      await waitReady(url, child, () => output, 240_000);

      const add = await call(`${url}/api/services/example/calculator/invoke/add`, { body: '[2, 40]', contentType: 'application/json' });
      expect(add.body, add.text).to.deep.equal({ result: 42 });
      const greet = await call(`${url}/api/services/example/greeter/invoke/greet`, { body: '{"name":"World"}', contentType: 'application/json' });
      expect(greet.body, greet.text).to.deep.equal({ result: 'Hello, World!' });
      // An HTTP handler, at its sidecar's mount: built with the WASI WIT in examples/wit, which the build stage copies.
      const hello = await fetch(`${url}/hello/`);
      expect([hello.status, await hello.text()]).to.deep.equal([200, 'Hello from a wasi:http component!\n']);
      const page = await fetch(`${url}/console/`);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      const health = healthcheck();
      expect(health.status, health.stderr).to.equal(0);

      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      const down = healthcheck();
      expect(down.status, 'the health check fails once rt is gone').to.equal(1);
      expect(down.stderr).to.include('rt healthcheck:');

      expect(await snapshot(app), 'nothing written in the app directory').to.deep.equal(before.app);
      expect(await snapshot(components), 'nothing written in the components directory').to.deep.equal(before.components);
      expect((await readdir(join(local.get(envOf(runtime).RT_CACHE_DIR)!, 'components'))).length, 'the transpiled components are in the cache volume').to.be.above(0);
    });
  });
});
