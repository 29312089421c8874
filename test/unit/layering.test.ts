// The layering of lib/ (docs/architecture.md): the primary and the workers
// share only the modules below both (lib/*.ts, lib/config, lib/wit), which
// import neither; nothing imports in a circle, and nothing imports the entry
// point (lib/cli.ts, which starts both). Within a worker, three layers over
// one another: http (requests and answers) → execution (where calls run) →
// sandbox (what a guest may touch); a layer imports only those below it, and
// none imports the worker's top (main.ts, metrics.ts), which wires them. The
// wasi:http handler host (wasi-host) sits beside the sandbox: what runs calls
// uses it, and it uses only the sandbox. Inside it, the version-free core
// imports no version folder (p2/, ...), and no version folder another. Read
// from the sources by TypeScript's own import scanner: static, dynamic and
// type-only imports and re-exports, and none of the words in comments.

import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const LIB = join(ROOT, 'lib');

/** Every lib/ module (as `lib/...ts`) and the lib/ modules it imports, statically or dynamically, types included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        const source = readFileSync(path, 'utf8');
        const targets = ts
          .preProcessFile(source, true, true)
          .importedFiles.filter(({ fileName }) => fileName.startsWith('.'))
          .map(({ fileName }) => relative(ROOT, normalize(join(dirname(path), fileName))).replace(/\.js$/, '.ts'));
        graph.set(relative(ROOT, path), targets);
      }
    }
  };
  walk(LIB);
  return graph;
}

type Layer = 'primary' | 'worker' | 'http' | 'execution' | 'sandbox' | 'wasi-host' | 'entry' | 'shared';

function layer(module: string): Layer {
  if (module.startsWith('lib/primary/')) return 'primary';
  if (module === 'lib/cli.ts') return 'entry';
  if (!module.startsWith('lib/worker/')) return 'shared';
  const inner = /^lib\/worker\/(http|execution|sandbox|wasi-host)\//.exec(module)?.[1] as Layer | undefined;
  return inner ?? 'worker';
}

/** What each layer may import besides itself and the shared modules. */
const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  entry: ['primary', 'worker', 'http', 'execution', 'sandbox', 'wasi-host'],
  primary: [],
  worker: ['http', 'execution', 'sandbox', 'wasi-host'],
  http: ['execution', 'sandbox', 'wasi-host'],
  execution: ['sandbox', 'wasi-host'],
  'wasi-host': ['sandbox'],
  sandbox: [],
  shared: [],
};

/** Imports against the layering, as `from → to`. */
function crossings(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const [a, b] = [layer(from), layer(to)];
      if (a !== b && b !== 'shared' && !MAY_IMPORT[a].includes(b)) found.push(`${from} → ${to}`);
    }
  }
  return found;
}

/** The wasi-host folder a module is in (`core`, `p2`, ...), if it is in one. */
function hostFolder(module: string): string | undefined {
  return /^lib\/worker\/wasi-host\/([^/]+)\//.exec(module)?.[1];
}

/** Imports within wasi-host that tie the core to a WASI version or one version to another. */
function versionCrossings(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const a = hostFolder(from);
    if (a === undefined) continue;
    for (const to of targets) {
      const b = hostFolder(to);
      if (b !== undefined && b !== a && b !== 'core') found.push(`${from} → ${to}`);
    }
  }
  return found;
}

/** Import cycles, each as the modules around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (module: string): void => {
    const at = path.indexOf(module);
    if (at >= 0) return void found.push([...path.slice(at), module]);
    if (done.has(module)) return;
    path.push(module);
    for (const target of graph.get(module) ?? []) visit(target);
    path.pop();
    done.add(module);
  };
  for (const module of graph.keys()) visit(module);
  return found;
}

describe('layering of lib/', () => {
  const graph = importGraph();

  it('finds the modules and their imports', () => {
    expect(graph.get('lib/primary/supervisor.ts')).to.include('lib/primary/control-plane.ts');
    expect(graph.get('lib/cli.ts')).to.include('lib/primary/supervisor.ts');
    expect(graph.size).to.be.above(50);
  });

  it('finds every layer of the worker', () => {
    const layers = new Set([...graph.keys()].map(layer));
    expect([...layers].sort()).to.deep.equal(['entry', 'execution', 'http', 'primary', 'sandbox', 'shared', 'wasi-host', 'worker']);
  });

  it('keeps lib/worker and lib/primary apart, the shared modules below both, and the worker in its layers', () => {
    expect(crossings(graph)).to.deep.equal([]);
  });

  it('keeps the handler host’s core free of WASI versions, and each version folder to itself and the core', () => {
    const folders = new Set([...graph.keys()].map(hostFolder).filter((f) => f !== undefined));
    expect([...folders].sort()).to.deep.equal(['core', 'p2', 'p3']);
    expect(versionCrossings(graph)).to.deep.equal([]);
    const bad = new Map([
      ['lib/worker/wasi-host/core/a.ts', ['lib/worker/wasi-host/p2/b.ts', 'lib/worker/wasi-host/core/c.ts']],
      ['lib/worker/wasi-host/p3/d.ts', ['lib/worker/wasi-host/p2/b.ts', 'lib/worker/wasi-host/core/c.ts', 'lib/worker/wasi-host/p3/e.ts']],
      ['lib/worker/wasi-host/index.ts', ['lib/worker/wasi-host/p2/b.ts', 'lib/worker/wasi-host/p3/d.ts']],
    ]);
    expect(versionCrossings(bad)).to.deep.equal(['lib/worker/wasi-host/core/a.ts → lib/worker/wasi-host/p2/b.ts', 'lib/worker/wasi-host/p3/d.ts → lib/worker/wasi-host/p2/b.ts']);
  });

  it('has no import cycle', () => {
    expect(cycles(graph).map((c) => c.join(' → '))).to.deep.equal([]);
  });

  it('would report a cycle and each kind of crossing (the checks can fail)', () => {
    const bad = new Map([
      ['lib/a.ts', ['lib/worker/b.ts']],
      ['lib/worker/b.ts', ['lib/a.ts', 'lib/primary/c.ts']],
      ['lib/primary/c.ts', ['lib/worker/d.ts', 'lib/cli.ts']],
      ['lib/cli.ts', ['lib/worker/d.ts']],
      ['lib/worker/execution/e.ts', ['lib/worker/http/f.ts', 'lib/worker/sandbox/g.ts', 'lib/worker/b.ts']],
      ['lib/worker/sandbox/g.ts', ['lib/worker/execution/e.ts', 'lib/worker/http/f.ts', 'lib/wit/h.ts']],
      ['lib/worker/http/f.ts', ['lib/worker/execution/e.ts', 'lib/worker/b.ts']],
    ]);
    expect(cycles(bad)).to.deep.equal([
      ['lib/a.ts', 'lib/worker/b.ts', 'lib/a.ts'],
      ['lib/worker/execution/e.ts', 'lib/worker/http/f.ts', 'lib/worker/execution/e.ts'],
      ['lib/worker/execution/e.ts', 'lib/worker/sandbox/g.ts', 'lib/worker/execution/e.ts'],
    ]);
    expect(crossings(bad)).to.deep.equal([
      'lib/a.ts → lib/worker/b.ts',
      'lib/worker/b.ts → lib/primary/c.ts',
      'lib/primary/c.ts → lib/worker/d.ts',
      'lib/primary/c.ts → lib/cli.ts',
      'lib/worker/execution/e.ts → lib/worker/http/f.ts',
      'lib/worker/execution/e.ts → lib/worker/b.ts',
      'lib/worker/sandbox/g.ts → lib/worker/execution/e.ts',
      'lib/worker/sandbox/g.ts → lib/worker/http/f.ts',
      'lib/worker/http/f.ts → lib/worker/b.ts',
    ]);
  });
});
