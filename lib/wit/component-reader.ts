// Reads a component's imports and exports, with full structural types, from
// its binary (component model `design/mvp/Binary.md`). jco's `componentWit`
// prints only the root world, so the runtime decodes what it needs itself.
//
// The reader tracks the component-level index spaces (types, functions,
// instances, components) and ignores the core ones: nothing at the component
// level depends on core modules beyond their count, and core module bytes are
// skipped unread. Nested components are evaluated when they are instantiated,
// with their imports bound to the instantiation's arguments: that is how
// wit-component's per-interface shim components give exported types their
// names, and how a type `use`d from another interface keeps its origin.

import type { ComponentInterface, ExternKind, ImportedItem, Param, PrimitiveName, TypeDefinition, TypeOrigin, WitFunction, WitInterface, WitType } from './types.js';
import { parseInterfaceName } from './types.js';
import { BinaryReader, type BinaryFaults } from './binary-reader.js';
import { CANON_OPCODES, CANON_OPTIONS } from './canon-opcodes.js';

export class ComponentFormatError extends Error {}

/** Reads component bytes, reporting problems as ComponentFormatError. */
function componentBytes(buf: Uint8Array, pos: number, end: number): Bytes {
  return new BinaryReader(buf, pos, end, COMPONENT_FAULTS);
}

const COMPONENT_FAULTS: BinaryFaults = {
  truncated: (offset) => new ComponentFormatError(`truncated component binary at offset ${offset}`),
  malformed: (offset, what) => new ComponentFormatError(`malformed component binary at offset ${offset}: ${what}`),
};

type Bytes = BinaryReader;

// ---------------------------------------------------------------- model

/** Origins created while evaluating one instance type or component body, named when the instance is. */
class Scope {
  readonly origins: TypeOrigin[] = [];

  originFor(name: string): TypeOrigin {
    const origin = { interface: '', name };
    this.origins.push(origin);
    return origin;
  }

  /** Gives every origin still waiting for one the interface name `name`. */
  nameAs(name: string): void {
    for (const o of this.origins) if (o.interface === '') o.interface = name;
  }
}

type TypeEntry =
  | { kind: 'value'; type: WitType }
  | { kind: 'resource'; name?: string; origin?: TypeOrigin }
  | { kind: 'func'; fn: Omit<WitFunction, 'name'> }
  | { kind: 'instance'; instance: InstanceItem }
  | { kind: 'component'; imports: Map<string, Item>; exports: Map<string, Item> };

interface InstanceItem {
  exports: Map<string, Item>;
  scope?: Scope;
}

interface ComponentDefinition {
  bytes: Uint8Array;
  start: number;
  end: number;
  env: Env;
}

type Item =
  | { sort: 'type'; entry: TypeEntry }
  | { sort: 'func'; fn: Omit<WitFunction, 'name'> }
  | { sort: 'instance'; instance: InstanceItem }
  | { sort: 'component'; definition?: ComponentDefinition; type?: Extract<TypeEntry, { kind: 'component' }> }
  | { sort: 'value' | 'core' };

/** One scope's index spaces (a component body, or a component/instance type). */
class Env {
  readonly types: TypeEntry[] = [];
  readonly funcs: Omit<WitFunction, 'name'>[] = [];
  readonly instances: InstanceItem[] = [];
  readonly components: Item[] = [];

  constructor(
    readonly scope: Scope,
    readonly parent?: Env,
  ) {}

  type(i: number, r: Bytes): TypeEntry {
    return this.types[i] ?? r.fail(`type index ${i} out of range`);
  }

  push(item: Item): void {
    switch (item.sort) {
      case 'type':
        this.types.push(item.entry);
        break;
      case 'func':
        this.funcs.push(item.fn);
        break;
      case 'instance':
        this.instances.push(item.instance);
        break;
      case 'component':
        this.components.push(item);
        break;
      case 'value': // values and core items are not tracked: nothing typed refers to them
      case 'core':
        break;
    }
  }

  item(sort: Sort, i: number, r: Bytes): Item {
    switch (sort) {
      case 'type':
        return { sort, entry: this.type(i, r) };
      case 'func':
        return { sort, fn: this.funcs[i] ?? r.fail(`function index ${i} out of range`) };
      case 'instance':
        return { sort, instance: this.instances[i] ?? r.fail(`instance index ${i} out of range`) };
      case 'component':
        return this.components[i] ?? r.fail(`component index ${i} out of range`);
      default:
        return { sort };
    }
  }
}

type Sort = 'core' | 'func' | 'value' | 'type' | 'component' | 'instance';

const PRIMITIVES: Record<number, PrimitiveName> = {
  0x7f: 'bool',
  0x7e: 's8',
  0x7d: 'u8',
  0x7c: 's16',
  0x7b: 'u16',
  0x7a: 's32',
  0x79: 'u32',
  0x78: 's64',
  0x77: 'u64',
  0x76: 'f32',
  0x75: 'f64',
  0x74: 'char',
  0x73: 'string',
  0x64: 'error-context',
};

// ---------------------------------------------------------------- types

function sort(r: Bytes): Sort {
  const b = r.byte();
  switch (b) {
    case 0x00:
      r.byte(); // the core sort
      return 'core';
    case 0x01:
      return 'func';
    case 0x02:
      return 'value';
    case 0x03:
      return 'type';
    case 0x04:
      return 'component';
    case 0x05:
      return 'instance';
    default:
      return r.fail(`unknown sort 0x${b.toString(16)}`);
  }
}

function valtype(r: Bytes, env: Env): WitType {
  const at = r.pos;
  const v = r.s33();
  if (v < 0) {
    const name = PRIMITIVES[v & 0x7f];
    if (!name) {
      r.pos = at;
      return r.fail(`unknown value type 0x${(v & 0x7f).toString(16)}`);
    }
    return { kind: 'primitive', name };
  }
  const entry = env.type(v, r);
  if (entry.kind !== 'value') return r.fail(`type index ${v} is not a value type`);
  return entry.type;
}

function handle(kind: 'own' | 'borrow', r: Bytes, env: Env): WitType {
  const i = r.u32();
  const entry = env.type(i, r);
  if (entry.kind !== 'resource') return r.fail(`${kind} of type ${i}, which is not a resource`);
  return { kind, resource: entry.name ?? `resource${i}` };
}

function defvaltype(opcode: number, r: Bytes, env: Env): WitType {
  const primitive = PRIMITIVES[opcode];
  if (primitive) return { kind: 'primitive', name: primitive };
  switch (opcode) {
    case 0x72:
      return { kind: 'record', fields: r.vec(() => ({ name: r.string(), type: valtype(r, env) })) };
    case 0x71:
      return {
        kind: 'variant',
        cases: r.vec(() => {
          const name = r.string();
          const type = r.optional(() => valtype(r, env)) ?? null;
          if (r.byte() !== 0) r.fail('expected 0x00 after a variant case');
          return { name, type };
        }),
      };
    case 0x70:
      return { kind: 'list', element: valtype(r, env) };
    case 0x67: {
      const element = valtype(r, env);
      return { kind: 'fixed-list', element, length: r.u32() };
    }
    case 0x6f:
      return { kind: 'tuple', elements: r.vec(() => valtype(r, env)) };
    case 0x6e:
      return { kind: 'flags', flags: r.vec(() => r.string()) };
    case 0x6d:
      return { kind: 'enum', cases: r.vec(() => r.string()) };
    case 0x6b:
      return { kind: 'option', inner: valtype(r, env) };
    case 0x6a: {
      const ok = r.optional(() => valtype(r, env)) ?? null;
      const err = r.optional(() => valtype(r, env)) ?? null;
      return { kind: 'result', ok, err };
    }
    case 0x69:
      return handle('own', r, env);
    case 0x68:
      return handle('borrow', r, env);
    case 0x66:
      return { kind: 'stream', element: r.optional(() => valtype(r, env)) ?? null };
    case 0x65:
      return { kind: 'future', element: r.optional(() => valtype(r, env)) ?? null };
    default:
      r.pos--;
      return r.fail(`unknown type opcode 0x${opcode.toString(16)}`);
  }
}

function functype(async: boolean, r: Bytes, env: Env): Omit<WitFunction, 'name'> {
  const params: Param[] = r.vec(() => ({ name: r.string(), type: valtype(r, env) }));
  let result: WitType | null;
  const tag = r.byte();
  if (tag === 0x00) {
    result = valtype(r, env);
  } else if (tag === 0x01) {
    // Named results are gone from WIT; an empty list means no result.
    const named = r.vec(() => ({ name: r.string(), type: valtype(r, env) }));
    result = named.length === 0 ? null : named.length === 1 ? named[0].type : { kind: 'tuple', elements: named.map((n) => n.type) };
  } else {
    return r.fail(`unknown result list 0x${tag.toString(16)}`);
  }
  return async ? { params, result, async: true } : { params, result };
}

function deftype(r: Bytes, env: Env): TypeEntry {
  const opcode = r.byte();
  switch (opcode) {
    case 0x40:
    case 0x43:
      return { kind: 'func', fn: functype(opcode === 0x43, r, env) };
    case 0x41:
      return componentType(r, env);
    case 0x42:
      return { kind: 'instance', instance: instanceType(r, env) };
    case 0x3f:
    case 0x3e: {
      r.byte(); // representation (core valtype i32)
      r.optional(() => r.u32()); // destructor
      if (opcode === 0x3e) r.optional(() => r.u32()); // async destructor callback
      return { kind: 'resource' };
    }
    default:
      return { kind: 'value', type: defvaltype(opcode, r, env) };
  }
}

/** The type a declaration ascribes, bound in `env`. */
function externtype(r: Bytes, env: Env): Item {
  const tag = r.byte();
  switch (tag) {
    case 0x00:
      r.byte(); // 0x11: core module
      r.u32();
      return { sort: 'core' };
    case 0x01: {
      const entry = env.type(r.u32(), r);
      if (entry.kind !== 'func') return r.fail('func import or export of a type that is not a function type');
      return { sort: 'func', fn: entry.fn };
    }
    case 0x02:
      if (r.byte() === 0x00) r.u32();
      else valtype(r, env);
      return { sort: 'value' };
    case 0x03:
      if (r.byte() === 0x00) return { sort: 'type', entry: env.type(r.u32(), r) };
      return { sort: 'type', entry: { kind: 'resource' } };
    case 0x04: {
      const entry = env.type(r.u32(), r);
      if (entry.kind !== 'component') return r.fail('component import or export of a type that is not a component type');
      return { sort: 'component', type: entry };
    }
    case 0x05: {
      const entry = env.type(r.u32(), r);
      if (entry.kind !== 'instance') return r.fail('instance import or export of a type that is not an instance type');
      return { sort: 'instance', instance: entry.instance };
    }
    default:
      return r.fail(`unknown extern type 0x${tag.toString(16)}`);
  }
}

/** A type given a name by an import or export: it is named here unless it already has a name. */
function named(item: Item, name: string, scope: Scope): Item {
  if (item.sort !== 'type') return item;
  const entry = item.entry;
  if (entry.kind === 'value') {
    if (entry.type.origin) return item;
    return { sort: 'type', entry: { kind: 'value', type: { ...entry.type, origin: scope.originFor(name) } as WitType } };
  }
  if (entry.kind === 'resource' && entry.name === undefined) {
    return { sort: 'type', entry: { kind: 'resource', name, origin: scope.originFor(name) } };
  }
  return item;
}

function externName(r: Bytes): string {
  const tag = r.byte();
  const name = r.string();
  if (tag === 0x02) {
    r.vec(() => {
      const kind = r.byte();
      if (kind === 0x00 || kind === 0x01 || kind === 0x02) r.string();
      else r.fail(`unknown name attribute 0x${kind.toString(16)}`);
    });
  } else if (tag !== 0x00 && tag !== 0x01) {
    r.fail(`unknown name encoding 0x${tag.toString(16)}`);
  }
  return name;
}

function alias(r: Bytes, env: Env): void {
  const s = sort(r);
  const target = r.byte();
  switch (target) {
    case 0x00: {
      const instance = env.instances[r.u32()] ?? r.fail('alias of an instance index out of range');
      const name = r.string();
      if (s === 'core') return;
      const item = instance.exports.get(name) ?? r.fail(`alias of "${name}", which the instance does not export`);
      env.push(item);
      return;
    }
    case 0x01:
      r.u32();
      r.string();
      return; // core export: core index spaces are not tracked
    case 0x02: {
      const count = r.u32();
      const index = r.u32();
      if (s === 'core') return;
      let outer: Env | undefined = env;
      for (let i = 0; i < count; i++) outer = outer?.parent;
      if (!outer) return r.fail('outer alias beyond the outermost scope');
      env.push(outer.item(s, index, r));
      return;
    }
    default:
      return r.fail(`unknown alias target 0x${target.toString(16)}`);
  }
}

/** Skips a core type: a function type or a module type (core types are not tracked). */
function skipCoreType(r: Bytes): void {
  const opcode = r.byte();
  if (opcode === 0x60) {
    r.vec(() => skipCoreValtype(r));
    r.vec(() => skipCoreValtype(r));
  } else if (opcode === 0x50) {
    r.vec(() => {
      const decl = r.byte();
      if (decl === 0x00) {
        r.string();
        r.string();
        skipCoreExternType(r);
      } else if (decl === 0x01) {
        skipCoreType(r);
      } else if (decl === 0x02) {
        r.byte();
        r.byte();
        r.u32();
        r.u32();
      } else if (decl === 0x03) {
        r.string();
        skipCoreExternType(r);
      } else {
        r.fail(`unknown core module declaration 0x${decl.toString(16)}`);
      }
    });
  } else {
    r.fail(`unsupported core type 0x${opcode.toString(16)}`);
  }
}

function skipCoreValtype(r: Bytes): void {
  const b = r.byte();
  if (b === 0x63 || b === 0x64) r.s33(); // (ref null? heaptype)
}

function skipLimits(r: Bytes): void {
  const flags = r.byte();
  r.u32();
  if (flags & 0x01) r.u32();
}

function skipCoreExternType(r: Bytes): void {
  const kind = r.byte();
  switch (kind) {
    case 0x00:
      r.u32();
      return;
    case 0x01:
      skipCoreValtype(r);
      skipLimits(r);
      return;
    case 0x02:
      skipLimits(r);
      return;
    case 0x03:
      skipCoreValtype(r);
      r.byte();
      return;
    case 0x04:
      r.byte();
      r.u32();
      return;
    default:
      r.fail(`unknown core extern type 0x${kind.toString(16)}`);
  }
}

function instanceType(r: Bytes, parent: Env): InstanceItem {
  const env = new Env(new Scope(), parent);
  const exports = new Map<string, Item>();
  r.vec(() => declaration(r, env, exports, undefined));
  return { exports, scope: env.scope };
}

function componentType(r: Bytes, parent: Env): TypeEntry {
  const env = new Env(new Scope(), parent);
  const imports = new Map<string, Item>();
  const exports = new Map<string, Item>();
  r.vec(() => declaration(r, env, exports, imports));
  return { kind: 'component', imports, exports };
}

/** One declaration of an instance type (or, with `imports`, a component type). */
function declaration(r: Bytes, env: Env, exports: Map<string, Item>, imports: Map<string, Item> | undefined): void {
  const tag = r.byte();
  switch (tag) {
    case 0x00:
      skipCoreType(r);
      return;
    case 0x01:
      env.types.push(deftype(r, env));
      return;
    case 0x02:
      alias(r, env);
      return;
    case 0x03:
    case 0x04: {
      if (tag === 0x03 && !imports) return r.fail('import declaration in an instance type');
      const name = externName(r);
      const item = named(externtype(r, env), name, env.scope);
      env.push(item);
      (tag === 0x03 ? imports! : exports).set(name, item);
      return;
    }
    default:
      return r.fail(`unknown declaration 0x${tag.toString(16)}`);
  }
}

// ---------------------------------------------------------------- components

interface Body {
  imports: Map<string, Item>;
  exports: Map<string, Item>;
}

const SECTION = {
  custom: 0,
  coreModule: 1,
  coreInstance: 2,
  coreType: 3,
  component: 4,
  instance: 5,
  alias: 6,
  type: 7,
  canon: 8,
  start: 9,
  import: 10,
  export: 11,
  value: 12,
} as const;

/** Sections read entry by entry, so they must be consumed exactly. */
const PARSED_SECTIONS = new Set<number>([SECTION.instance, SECTION.alias, SECTION.type, SECTION.canon, SECTION.import, SECTION.export]);

/**
 * Evaluates a component body (the sections after its preamble). `args` binds
 * its imports when it is being instantiated.
 */
function evaluate(r: Bytes, env: Env, args: Map<string, Item> | undefined): Body {
  const body: Body = { imports: new Map(), exports: new Map() };
  while (r.pos < r.end) {
    const id = r.byte();
    const size = r.u32();
    const end = r.pos + size;
    if (end > r.end) throw new ComponentFormatError(`truncated component binary: section ${id} at offset ${r.pos} runs past the end`);
    const section = r.slice(r.pos, end);
    switch (id) {
      case SECTION.custom:
      case SECTION.coreModule:
      case SECTION.coreInstance:
      case SECTION.coreType:
      case SECTION.start:
      case SECTION.value:
        break; // nothing at the component level depends on what is inside
      case SECTION.component:
        nestedPreamble(section);
        env.components.push({ sort: 'component', definition: { bytes: r.buf, start: section.pos, end, env } });
        break;
      case SECTION.instance:
        section.vec(() => env.instances.push(instanceDefinition(section, env)));
        break;
      case SECTION.alias:
        section.vec(() => alias(section, env));
        break;
      case SECTION.type:
        section.vec(() => env.types.push(deftype(section, env)));
        break;
      case SECTION.canon:
        section.vec(() => canon(section, env));
        break;
      case SECTION.import:
        section.vec(() => {
          const name = externName(section);
          const declared = externtype(section, env);
          // Inside an instantiated component an import is bound to its argument, whose
          // name (if any) comes from where it was defined: shim imports such as
          // "import-type-point" are not names a user ever wrote.
          const item = args ? (args.get(name) ?? declared) : named(declared, name, env.scope);
          env.push(item);
          body.imports.set(name, item);
        });
        break;
      case SECTION.export:
        section.vec(() => {
          const name = externName(section);
          const s = sort(section);
          const actual = env.item(s, section.u32(), section);
          const ascribed = section.optional(() => externtype(section, env));
          const item = named(ascribed ?? actual, name, env.scope);
          env.push(item);
          body.exports.set(name, item);
        });
        break;
      default:
        throw new ComponentFormatError(`unknown section id ${id} at offset ${r.pos - 1}`);
    }
    if (PARSED_SECTIONS.has(id) && section.pos !== end) section.fail(`section ${id} has ${end - section.pos} unread bytes`);
    r.pos = end;
  }
  return body;
}

function nestedPreamble(r: Bytes): void {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
  for (const b of magic) if (r.byte() !== b) r.fail('nested component without a component preamble');
}

function instanceDefinition(r: Bytes, env: Env): InstanceItem {
  const tag = r.byte();
  if (tag === 0x00) {
    const component = env.components[r.u32()] ?? r.fail('instantiation of a component index out of range');
    const args = new Map<string, Item>();
    r.vec(() => {
      const name = r.string();
      const s = sort(r);
      args.set(name, env.item(s, r.u32(), r));
    });
    if (component.sort !== 'component') return r.fail('instantiation of something that is not a component');
    return instantiate(component, args);
  }
  if (tag === 0x01) {
    // An instance made of existing definitions: its exported types are named here.
    const scope = new Scope();
    const exports = new Map<string, Item>();
    r.vec(() => {
      const name = externName(r);
      const s = sort(r);
      exports.set(name, named(env.item(s, r.u32(), r), name, scope));
    });
    return { exports, scope };
  }
  return r.fail(`unknown instance expression 0x${tag.toString(16)}`);
}

function instantiate(component: Extract<Item, { sort: 'component' }>, args: Map<string, Item>): InstanceItem {
  if (component.definition) {
    const { bytes, start, end, env } = component.definition;
    const inner = new Env(new Scope(), env);
    const body = evaluate(componentBytes(bytes, start, end), inner, args);
    return { exports: body.exports, scope: inner.scope };
  }
  return { exports: component.type?.exports ?? new Map<string, Item>() };
}

function skipOpts(r: Bytes): void {
  r.vec(() => {
    const opt = r.byte();
    if (opt === CANON_OPTIONS.memory || opt === CANON_OPTIONS.realloc || opt === CANON_OPTIONS.postReturn || opt === CANON_OPTIONS.callback) r.u32();
    else if (opt > CANON_OPTIONS.callback) r.fail(`unknown canonical option 0x${opt.toString(16)}`);
  });
}

/** A canonical definition: `lift` makes a component function; the others make core functions, stepped over. */
function canon(r: Bytes, env: Env): void {
  const op = r.byte();
  const known = CANON_OPCODES.get(op);
  if (!known) return r.fail(`unknown canonical definition 0x${op.toString(16)}`);
  if (known.name === 'lift') {
    r.byte(); // 0x00: core func sort
    r.u32();
    skipOpts(r);
    const entry = env.type(r.u32(), r);
    if (entry.kind !== 'func') return r.fail('canon lift with a type that is not a function type');
    env.funcs.push(entry.fn);
    return;
  }
  if (known.name === 'task.return') {
    const tag = r.byte();
    if (tag === 0x00) r.s33();
    else if (tag !== 0x01 || r.byte() !== 0x00) r.fail('malformed task.return result list');
    skipOpts(r);
    return;
  }
  for (const immediate of known.immediates) {
    if (immediate === 'byte') r.byte();
    else if (immediate === 'u32') r.u32();
    else skipOpts(r);
  }
}

// ---------------------------------------------------------------- the result

function functionsAndTypes(exports: Map<string, Item>): { functions: WitFunction[]; types: TypeDefinition[] } {
  const functions: WitFunction[] = [];
  const types: TypeDefinition[] = [];
  for (const [name, item] of exports) {
    if (item.sort === 'func') functions.push({ name, ...item.fn });
    else if (item.sort === 'type') {
      const entry = item.entry;
      if (entry.kind === 'resource') types.push({ name, type: { kind: 'resource' } });
      else if (entry.kind === 'value') types.push({ name, type: entry.type });
    }
  }
  return { functions, types };
}

function externKind(item: Item): ExternKind {
  switch (item.sort) {
    case 'func':
      return 'function';
    case 'core':
      return 'module';
    default:
      return item.sort;
  }
}

function checkPreamble(bytes: Uint8Array): void {
  if (bytes.length < 8) {
    throw new ComponentFormatError(bytes.length === 0 ? 'not a WebAssembly component: the file is empty' : 'not a WebAssembly component: the file is too short');
  }
  if (bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new ComponentFormatError('not a WebAssembly component: the file does not start with the \\0asm magic number');
  }
  const layer = bytes[6] | (bytes[7] << 8);
  if (layer === 0) {
    throw new ComponentFormatError(`not a WebAssembly component: this is a core module (version ${bytes[4] | (bytes[5] << 8)}), not a component`);
  }
  if (layer !== 1 || bytes[4] !== 0x0d || bytes[5] !== 0x00) {
    throw new ComponentFormatError(`not a WebAssembly component this runtime can read: layer ${layer}, version 0x${bytes[4].toString(16)}`);
  }
}

/** Decodes the imports and exports of a component binary. Throws ComponentFormatError for anything that is not a valid component. */
export function readComponentInterface(bytes: Uint8Array): ComponentInterface {
  checkPreamble(bytes);
  const env = new Env(new Scope());
  let body: Body;
  try {
    body = evaluate(componentBytes(bytes, 8, bytes.length), env, undefined);
  } catch (e) {
    if (e instanceof ComponentFormatError) throw e;
    if (e instanceof TypeError) throw new ComponentFormatError(`malformed component binary: ${e.message}`);
    throw e;
  }

  const imports: ImportedItem[] = [];
  for (const [name, item] of body.imports) {
    const imported: ImportedItem = { name, kind: externKind(item) };
    if (item.sort === 'instance') {
      item.instance.scope?.nameAs(name);
      Object.assign(imported, functionsAndTypes(item.instance.exports));
    } else if (item.sort === 'func') {
      imported.function = { name, ...item.fn };
    }
    imports.push(imported);
  }

  const result: ComponentInterface = { imports, interfaces: [], functions: [], types: [] };
  for (const [name, item] of body.exports) {
    if (item.sort === 'instance') {
      item.instance.scope?.nameAs(name);
      const parsed = parseInterfaceName(name);
      const wit: WitInterface = { name, interfaceName: parsed?.interfaceName ?? name, ...functionsAndTypes(item.instance.exports) };
      if (parsed) wit.package = parsed.package;
      result.interfaces.push(wit);
    } else if (item.sort === 'func') {
      result.functions.push({ name, ...item.fn });
    } else if (item.sort === 'type') {
      result.types.push(...functionsAndTypes(new Map([[name, item]])).types);
    }
  }
  return result;
}
