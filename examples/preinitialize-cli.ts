// wizer's command line, answered by preinitialize.ts: componentize-js runs
// its `wizerBin` (componentize.ts makes it a script that runs this) with
// wizer's arguments, the initialization's own arguments on stdin, and its
// environment. A module or an argument preinitialize.ts does not take is
// handed to wizer itself, with the same arguments and stdin, so a build
// never fails for being pre-initialized here.

import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import wizer from '@bytecodealliance/wizer';
import { InitializationFailed, Unsupported, preinitialize, type PreinitializeOptions } from './preinitialize.js';

interface Invocation {
  input: string;
  output: string;
  options: PreinitializeOptions;
}

/** wizer's arguments as preinitialize.ts takes them, or why they are not. */
function parse(args: string[]): Invocation | string {
  let input: string | undefined;
  let output: string | undefined;
  let initFunc = 'wizer.initialize';
  let keepInitFunc = false;
  let allowWasi = false;
  let inheritEnv = false;
  const preopens: [string, string][] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('-')) {
      input = arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = () => inline ?? args[++i] ?? '';
    switch (flag) {
      case '--allow-wasi':
        allowWasi = true;
        break;
      case '-f':
      case '--init-func':
        initFunc = value();
        break;
      case '-o':
        output = value();
        break;
      case '--dir': {
        const dir = value();
        preopens.push([dir, dir]);
        break;
      }
      case '--mapdir': {
        const [guest, host] = value().split('::');
        preopens.push([guest, host]);
        break;
      }
      case '--inherit-env':
        inheritEnv = value() === 'true';
        break;
      case '--keep-init-func':
        keepInitFunc = value() === 'true';
        break;
      // V8 has bulk memory, and inheriting stdio is what is done here.
      case '--wasm-bulk-memory':
      case '--inherit-stdio':
        if (value() !== 'true') return `${flag} other than true`;
        break;
      default:
        return `the argument ${flag}`;
    }
  }
  if (!input || !output) return 'no input or no output file';
  const env = inheritEnv ? Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)) : {};
  return { input, output, options: { initFunc, keepInitFunc, wasi: allowWasi ? { env, preopens, stdio: [0, 1, 2] } : undefined } };
}

function runWizer(args: string[], stdin: Buffer, why: string): never {
  process.stderr.write(`pre-initializing with wizer: ${why}\n`);
  const run = spawnSync(wizer, args, { input: stdin, stdio: ['pipe', 'inherit', 'inherit'] });
  process.exit(run.status ?? 1);
}

const args = process.argv.slice(2);
// The guest reads its arguments from stdin; read here first, so that wizer can be given them too.
const stdin = readFileSync(0);
const invocation = parse(args);
if (typeof invocation === 'string') runWizer(args, stdin, invocation);
const outcome = run(invocation);
if (outcome instanceof Unsupported) runWizer(args, stdin, outcome.message);
if (outcome instanceof InitializationFailed) {
  // componentize-js shows wizer's output when it fails, which names the failure as this does.
  process.stderr.write(`Error: ${outcome.message}\n`);
  process.exit(1);
}

/** Pre-initializes as `invocation` asks, the guest's stdin a file of what this process was given. */
function run({ input, output, options }: Invocation): Unsupported | InitializationFailed | undefined {
  const stdinFile = `${output}.stdin`;
  writeFileSync(stdinFile, stdin);
  const stdinFd = openSync(stdinFile, 'r');
  try {
    const wasi = options.wasi && { ...options.wasi, stdio: [stdinFd, 1, 2] as [number, number, number] };
    writeFileSync(output, preinitialize(readFileSync(input), { ...options, wasi }));
    return undefined;
  } catch (e) {
    if (e instanceof Unsupported || e instanceof InitializationFailed) return e;
    throw e;
  } finally {
    closeSync(stdinFd);
    rmSync(stdinFile, { force: true });
  }
}
