// wasi:http/types@0.3#fields: the fields of core/fields.ts (0.2's, the same rules),
// with 0.3's names for reading them all and for taking a name out. A class
// of its own, as the 0.3 glue checks the fields it is given against it.

import { Fields as CoreFields, type HeaderError } from '../core/fields.js';
import type { FieldEntry } from '../core/field-rules.js';

export type { HeaderError };

export class Fields extends CoreFields {
  copyAll(): FieldEntry[] {
    return this.entries();
  }

  getAndDelete(name: string): Uint8Array[] {
    const values = this.get(name);
    this.delete(name);
    return values;
  }
}
