// The component-level index spaces the component reader tracks (types,
// functions, instances, components), what their entries hold, and the byte
// reader it reads components with (errors as ComponentFormatError).

import { BinaryReader, type BinaryFaults } from './binary-reader.js';
import type { PrimitiveName, TypeOrigin, WitFunction, WitType } from './types.js';

export class ComponentFormatError extends Error {}

/** Reads component bytes, reporting problems as ComponentFormatError. */
export function componentBytes(buf: Uint8Array, pos: number, end: number): Bytes {
  return new BinaryReader(buf, pos, end, COMPONENT_FAULTS);
}

const COMPONENT_FAULTS: BinaryFaults = {
  truncated: (offset) => new ComponentFormatError(`truncated component binary at offset ${offset}`),
  malformed: (offset, what) => new ComponentFormatError(`malformed component binary at offset ${offset}: ${what}`),
};

export type Bytes = BinaryReader;

// ---------------------------------------------------------------- model

/** Origins created while evaluating one instance type or component body, named when the instance is. */
export class Scope {
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

export type TypeEntry =
  | { kind: 'value'; type: WitType }
  | { kind: 'resource'; name?: string; origin?: TypeOrigin }
  | { kind: 'func'; fn: Omit<WitFunction, 'name'> }
  | { kind: 'instance'; instance: InstanceItem }
  | { kind: 'component'; imports: Map<string, Item>; exports: Map<string, Item> };

export interface InstanceItem {
  exports: Map<string, Item>;
  scope?: Scope;
}

export interface ComponentDefinition {
  bytes: Uint8Array;
  start: number;
  end: number;
  env: Env;
}

export type Item =
  | { sort: 'type'; entry: TypeEntry }
  | { sort: 'func'; fn: Omit<WitFunction, 'name'> }
  | { sort: 'instance'; instance: InstanceItem }
  | { sort: 'component'; definition?: ComponentDefinition; type?: Extract<TypeEntry, { kind: 'component' }> }
  | { sort: 'value' | 'core' };

/** One scope's index spaces (a component body, or a component/instance type). */
export class Env {
  readonly types: TypeEntry[] = [];
  readonly funcs: Omit<WitFunction, 'name'>[] = [];
  readonly instances: InstanceItem[] = [];
  readonly components: Item[] = [];

  /** A string encoding other than UTF-8 some canonical definition in the component uses (kept on the outermost scope). */
  #stringEncoding: 'utf16' | 'latin1+utf16' | undefined;

  constructor(
    readonly scope: Scope,
    readonly parent?: Env,
  ) {}

  get stringEncoding(): 'utf16' | 'latin1+utf16' | undefined {
    return this.parent ? this.parent.stringEncoding : this.#stringEncoding;
  }

  noteStringEncoding(encoding: 'utf16' | 'latin1+utf16'): void {
    if (this.parent) this.parent.noteStringEncoding(encoding);
    else this.#stringEncoding ??= encoding;
  }

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

export type Sort = 'core' | 'func' | 'value' | 'type' | 'component' | 'instance';

export const PRIMITIVES: Record<number, PrimitiveName> = {
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
