// Decoding the component model's type definitions, declarations and
// aliases into rt's WIT type model (lib/wit/types.ts), against the index
// spaces of the component being read; core types are stepped over. The
// component reader (component-reader.ts) calls these as it walks sections.

import { Env, PRIMITIVES, Scope, type Bytes, type InstanceItem, type Item, type Sort, type TypeEntry } from './component-index-spaces.js';
import type { Param, WitFunction, WitType } from './types.js';

export function sort(r: Bytes): Sort {
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
  const t: WitType = { kind, resource: entry.name ?? `resource${i}` };
  if (entry.origin) t.origin = entry.origin;
  return t;
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

export function deftype(r: Bytes, env: Env): TypeEntry {
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
export function externtype(r: Bytes, env: Env): Item {
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
export function named(item: Item, name: string, scope: Scope): Item {
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

export function externName(r: Bytes): string {
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

export function alias(r: Bytes, env: Env): void {
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
