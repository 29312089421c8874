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
//
// This module walks the sections and evaluates them (instances, aliases,
// canonical definitions, imports and exports); component-types.ts decodes
// type definitions; component-index-spaces.ts holds what the index spaces
// contain; canon-opcodes.ts names the canonical definitions.

import { CANON_OPCODES, CANON_OPTIONS } from './canon-opcodes.js';
import { ComponentFormatError, Env, Scope, componentBytes, type Bytes, type InstanceItem, type Item } from './component-index-spaces.js';
import { alias, deftype, externName, externtype, named, sort } from './component-types.js';
import { parseInterfaceName, type ComponentInterface, type ExternKind, type ImportedItem, type TypeDefinition, type WitFunction, type WitInterface } from './types.js';

export { ComponentFormatError } from './component-index-spaces.js';

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
          const item = named(ascribed ? keepAsyncLift(ascribed, actual) : actual, name, env.scope);
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

/** An export's ascribed function type does not say how the function was lifted: an async lift stays async. */
function keepAsyncLift(ascribed: Item, actual: Item): Item {
  if (ascribed.sort === 'func' && actual.sort === 'func' && actual.fn.async && !ascribed.fn.async) return { sort: 'func', fn: { ...ascribed.fn, async: true } };
  return ascribed;
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

/** Reads a vector of canonical options; true when `async` is among them. A string encoding other than UTF-8 is noted on `env`. */
function readOpts(r: Bytes, env: Env): boolean {
  let async = false;
  r.vec(() => {
    const opt = r.byte();
    if (opt === CANON_OPTIONS.memory || opt === CANON_OPTIONS.realloc || opt === CANON_OPTIONS.postReturn || opt === CANON_OPTIONS.callback) r.u32();
    else if (opt === CANON_OPTIONS.async) async = true;
    else if (opt === CANON_OPTIONS.utf16) env.noteStringEncoding('utf16');
    else if (opt === CANON_OPTIONS.compactUtf16) env.noteStringEncoding('latin1+utf16');
    else if (opt > CANON_OPTIONS.callback) r.fail(`unknown canonical option 0x${opt.toString(16)}`);
  });
  return async;
}

function skipOpts(r: Bytes, env: Env): void {
  readOpts(r, env);
}

/** A canonical definition: `lift` makes a component function; the others make core functions, stepped over. */
function canon(r: Bytes, env: Env): void {
  const op = r.byte();
  const known = CANON_OPCODES.get(op);
  if (!known) return r.fail(`unknown canonical definition 0x${op.toString(16)}`);
  if (known.name === 'lift') {
    r.byte(); // 0x00: core func sort
    r.u32();
    // A function lifted with the `async` option is async (component model async ABI) whatever its type says:
    // toolchains before async function types (wit-bindgen's `[async]` names, jco's p3 tests) mark it so.
    const asyncLift = readOpts(r, env);
    const entry = env.type(r.u32(), r);
    if (entry.kind !== 'func') return r.fail('canon lift with a type that is not a function type');
    env.funcs.push(asyncLift && !entry.fn.async ? { ...entry.fn, async: true } : entry.fn);
    return;
  }
  if (known.name === 'task.return') {
    const tag = r.byte();
    if (tag === 0x00) r.s33();
    else if (tag !== 0x01 || r.byte() !== 0x00) r.fail('malformed task.return result list');
    skipOpts(r, env);
    return;
  }
  for (const immediate of known.immediates) {
    if (immediate === 'byte') r.byte();
    else if (immediate === 'u32') r.u32();
    else skipOpts(r, env);
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
      if (entry.kind === 'resource') types.push({ name, type: entry.origin ? { kind: 'resource', origin: entry.origin } : { kind: 'resource' } });
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
  if (env.stringEncoding) result.stringEncoding = env.stringEncoding;
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
