// Names the codec needs: WIT spellings of types for messages, and the JS
// property names jco gives record fields and flags.

import type { WitType } from './types.js';
import { integerTypeName } from './json-numbers.js';

/**
 * WIT syntax for a type as it appears in a signature: named types (records,
 * variants, enums, flags, aliases) by their name, the rest spelled out:
 * `list<u8>`, `option<person>`, `result<_, string>`.
 */
export function witTypeName(t: WitType): string {
  if (t.origin) return t.origin.name;
  return structuralName(t);
}

/** The type spelled out one level down, whatever it is called; children by `witTypeName`. */
function structuralName(t: WitType): string {
  switch (t.kind) {
    case 'primitive':
      return t.name;
    case 'list':
      return `list<${witTypeName(t.element)}>`;
    case 'fixed-list':
      return `list<${witTypeName(t.element)}, ${t.length}>`;
    case 'tuple':
      return `tuple<${t.elements.map(witTypeName).join(', ')}>`;
    case 'option':
      return `option<${witTypeName(t.inner)}>`;
    case 'result':
      if (t.ok === null && t.err === null) return 'result';
      if (t.err === null) return `result<${witTypeName(t.ok!)}>`;
      return `result<${t.ok === null ? '_' : witTypeName(t.ok)}, ${witTypeName(t.err)}>`;
    case 'own':
      return t.resource;
    case 'borrow':
      return `borrow<${t.resource}>`;
    case 'stream':
    case 'future':
      return t.element === null ? t.kind : `${t.kind}<${witTypeName(t.element)}>`;
    case 'record':
      return `record { ${t.fields.map((f) => `${f.name}: ${witTypeName(f.type)}`).join(', ')} }`;
    case 'variant':
      return `variant { ${t.cases.map((c) => (c.type ? `${c.name}(${witTypeName(c.type)})` : c.name)).join(', ')} }`;
    case 'enum':
      return `enum { ${t.cases.join(', ')} }`;
    case 'flags':
      return `flags { ${t.flags.join(', ')} }`;
  }
}

/**
 * How an error message names the type a value should have had: what it is
 * (`record person`, `enum color`) and, for integers, the range (`u8 (0..255)`).
 * Aliases of structural types are spelled out, since the structure is what the
 * JSON has to match.
 */
export function expectedName(t: WitType): string {
  switch (t.kind) {
    case 'primitive':
      switch (t.name) {
        case 'u8':
        case 'u16':
        case 'u32':
        case 'u64':
        case 's8':
        case 's16':
        case 's32':
        case 's64':
          return integerTypeName(t.name);
        case 'char':
          return 'char (one Unicode scalar value)';
        default:
          return t.name;
      }
    case 'record':
    case 'variant':
    case 'enum':
    case 'flags':
      return t.origin ? `${t.kind} ${t.origin.name}` : structuralName(t);
    default:
      return structuralName(t);
  }
}

/**
 * The JS property jco uses for a record field or a flag: lower camel case
 * (`first-name` → `firstName`, `get-HTTP-status` → `getHttpStatus`).
 * WIT words are all-lowercase or all-uppercase, so each word is lowercased and
 * all but the first capitalised.
 */
export function jsPropertyName(witName: string): string {
  const words = witName.split('-');
  let out = words[0]!.toLowerCase();
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!.toLowerCase();
    out += w.charAt(0).toUpperCase() + w.slice(1);
  }
  return out;
}
