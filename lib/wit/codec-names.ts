// How the codec names types in its error messages: what a value should have
// been (`record person`, `u8 (0..255)`).

import { printStructure } from './print.js';
import type { WitType } from './types.js';
import { integerTypeName } from './json-numbers.js';

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
      return t.origin ? `${t.kind} ${t.origin.name}` : printStructure(t);
    default:
      return printStructure(t);
  }
}
