// The imports a component instance receives: WASI 0.2 from preview2-shim
// within the sandbox of docs/api.md §8 (no host filesystem, environment,
// network or process exit beyond what the sidecar grants), rt's own WASI 0.3
// interfaces (wasi-p3.ts) within the same grants, and trapping stubs for
// everything else (docs/api.md §4). Implementations are keyed by interface
// and version line (wit/interface-key.ts): an import of another line, such as
// `wasi:io/streams@0.3.0`, gets a stub, never the 0.2 code.

import * as preview2 from '@bytecodealliance/preview2-shim';
import type { PathGrant } from '../../service.js';
import { WASI_0_2 } from '../../wasi-lines.js';
import { interfaceKey, unversioned } from '../../wit/interface-key.js';
import { jsClassName, jsIdentifier } from '../../wit/js-names.js';
import { resourceFunctionName, type ImportedItem, type WitFunction } from '../../wit/types.js';
import { grantedOutgoingHandler } from './outbound.js';
import { grantedDirectories, grantedFilesystem } from './preopens.js';
import { wasi03Interfaces } from './wasi-p3.js';

export type ImportObject = Record<string, unknown>;

/** Implementations keyed by interface and version line (`wasi:io/streams@0.2`). */
export type InterfaceTable = Record<string, object>;

/** `table`'s keys (interface names) on WASI's 0.2 line. */
export function onWasi02(table: Record<string, object>): InterfaceTable {
  return Object.fromEntries(Object.entries(table).map(([name, value]) => [`${name}@${WASI_0_2}`, value]));
}

// preview2-shim declares its namespaces as type-only exports; at run time they
// are objects of interface implementations.
type Implementations = Record<string, object>;
const { cli, clocks, http, io, random } = preview2 as unknown as Record<
  'cli' | 'clocks' | 'http' | 'io' | 'random',
  Implementations
>;

/** Thrown by a stub: the component called an import the runtime does not provide. */
export class UnsatisfiedImportError extends Error {
  constructor(readonly importName: string) {
    super(`unsatisfied import ${importName}: the runtime does not provide it`);
  }
}

/** Thrown by `wasi:cli/exit`: ends the call, never the worker. */
export class ComponentExit extends Error {
  constructor(readonly status: unknown) {
    super(`the component called wasi:cli/exit (${JSON.stringify(status)})`);
  }
}


/** What an instance is granted beyond the sandbox's defaults (sidecar, docs/api.md §8; configuration, §5.2). */
export interface Grants {
  /** Environment variables (sidecar `env`). */
  env: [string, string][];
  /** The service's configuration as flattened keys, for wasi:config/store. */
  config: [string, string][];
  /** Preopened host directories (`allowed_paths`). */
  paths: PathGrant[];
  /** Hosts outgoing HTTP may reach (`allowed_outbound_hosts`). */
  outboundHosts: string[];
}

// Interfaces replaced (not just passed through) to keep the host out of
// reach, and rt's own of the 0.3 line (wasi-p3.ts). The environment, the
// filesystem and outgoing HTTP hold only what the sidecar grants; without a
// granted host, outgoing HTTP stays a trapping stub.
function sandboxed({ env, config, paths, outboundHosts }: Grants): InterfaceTable {
  const settings = new Map(config);
  // One set of open grants, whichever line's filesystem the component imports.
  const preopens = grantedDirectories(paths);
  const exit = (status: unknown): never => {
    throw new ComponentExit(status);
  };
  return {
    ...wasi03Interfaces({ env, preopens, exit }),
    ...onWasi02({
      // The WASI config proposal (as Spin and wasmCloud serve it): reads cannot fail, a missing key is none.
      'wasi:config/store': {
        get: (key: string) => settings.get(key),
        getAll: () => config,
      },
      'wasi:cli/environment': {
        getEnvironment: () => env,
        getArguments: () => [],
        initialCwd: () => undefined,
      },
      'wasi:cli/exit': { exit },
      ...grantedFilesystem(preopens),
      ...(outboundHosts.length > 0 ? { 'wasi:http/outgoing-handler': grantedOutgoingHandler(outboundHosts) } : {}),
    }),
  };
}

const NO_GRANTS: Grants = { env: [], config: [], paths: [], outboundHosts: [] };

/** The WASI interfaces taken from preview2-shim as they are. Sockets and outgoing HTTP are not among them: no network. */
const PASSED_THROUGH: InterfaceTable = onWasi02({
  'wasi:cli/stdin': cli.stdin,
  'wasi:cli/stdout': cli.stdout,
  'wasi:cli/stderr': cli.stderr,
  'wasi:cli/terminal-input': cli.terminalInput,
  'wasi:cli/terminal-output': cli.terminalOutput,
  'wasi:cli/terminal-stdin': cli.terminalStdin,
  'wasi:cli/terminal-stdout': cli.terminalStdout,
  'wasi:cli/terminal-stderr': cli.terminalStderr,
  'wasi:clocks/monotonic-clock': clocks.monotonicClock,
  'wasi:clocks/wall-clock': clocks.wallClock,
  'wasi:io/error': io.error,
  'wasi:io/poll': io.poll,
  'wasi:io/streams': io.streams,
  'wasi:random/random': random.random,
  'wasi:random/insecure': random.insecure,
  'wasi:random/insecure-seed': random.insecureSeed,
  'wasi:http/types': http.types,
});

function trap(name: string): () => never {
  return () => {
    throw new UnsatisfiedImportError(name);
  };
}

/** An object shaped like the import `item` whose every function traps, naming itself. */
function stub(item: ImportedItem): unknown {
  if (item.kind === 'function') return trap(item.name);
  const members: Record<string, unknown> = {};
  for (const t of item.types ?? []) {
    if (t.type.kind !== 'resource') continue;
    const resource = t.name;
    // The glue constructs and instanceof-checks imported resources through their class.
    members[jsClassName(resource)] = class {
      constructor() {
        throw new UnsatisfiedImportError(`${item.name}#[constructor]${resource}`);
      }
    };
  }
  for (const fn of item.functions ?? []) addStubFunction(members, item.name, fn);
  return members;
}

function addStubFunction(members: Record<string, unknown>, importName: string, fn: WitFunction): void {
  const qualified = `${importName}#${fn.name}`;
  const decorated = resourceFunctionName(fn.name);
  if (!decorated) {
    members[jsIdentifier(fn.name)] = trap(qualified);
    return;
  }
  const { kind, resource, member = '' } = decorated;
  const cls = members[jsClassName(resource)] as { prototype: Record<string, unknown> } & Record<string, unknown>;
  if (!cls || kind === 'constructor') return;
  if (kind === 'static') cls[jsIdentifier(member)] = trap(qualified);
  else cls.prototype[jsIdentifier(member)] = trap(qualified);
}

/**
 * The import object for one component: keyed the way its glue asks
 * (`specifiers`, from jco: without versions), each entry the implementation
 * of its interface's version line (`imports` say which version the component
 * was built against) or a stub. `host`: implementations that take precedence
 * over the sandbox's (an HTTP handler's own host, wasi-host/).
 */
export function hostImports(specifiers: string[], imports: ImportedItem[], grants: Grants = NO_GRANTS, host: InterfaceTable = {}): ImportObject {
  const byName = new Map(imports.map((i) => [unversioned(i.name), i]));
  const replaced = sandboxed(grants);
  const object: ImportObject = {};
  for (const specifier of specifiers) {
    const item = byName.get(unversioned(specifier));
    const key = interfaceKey(item?.name ?? specifier);
    const provided = host[key] ?? replaced[key] ?? PASSED_THROUGH[key];
    if (provided) object[specifier] = provided;
    else object[specifier] = item ? stub(item) : {};
  }
  return object;
}
