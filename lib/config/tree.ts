// Between the two shapes of a configuration: flat (key path → value, which
// makes layering a plain "later wins") and nested tables (files and `Config`).

import { KEYS, type Value } from './schema.js';

export type Tree = { [name: string]: Value | Tree };

/** Nests the values in schema order, which is the order of `rt config` output. */
export function nest(values: ReadonlyMap<string, Value>): Tree {
  const root: Tree = {};
  for (const { path } of KEYS) {
    const value = values.get(path);
    if (value === undefined) continue;
    const parts = path.split('.');
    const leaf = parts.pop()!;
    let table = root;
    for (const part of parts) table = (table[part] ??= {}) as Tree;
    table[leaf] = typeof value === 'object' ? [...value] : value;
  }
  return root;
}

/** The schema's keys found in a nested object; anything else in it is ignored. */
export function flatten(tree: object): Map<string, Value> {
  const values = new Map<string, Value>();
  for (const { path } of KEYS) {
    let node: unknown = tree;
    for (const part of path.split('.')) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined;
    if (node !== undefined) values.set(path, node as Value);
  }
  return values;
}
