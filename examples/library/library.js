// The library example: reads the directory its sidecar grants (library.toml),
// through wasi:filesystem. rt confines every path to the grant and refuses
// writes to a read-only one; this code does not need to check anything.
import { getDirectories } from 'wasi:filesystem/preopens@0.2.3';

function shelf() {
  const found = getDirectories().find(([, name]) => name === '/books');
  if (!found) throw 'no /books directory: the sidecar grants none';
  return found[0];
}

/** A WASI error (thrown as { payload: error-code }) as text. */
function reason(e) {
  return typeof e === 'string' ? e : String(e?.payload ?? e);
}

export const books = {
  titles() {
    try {
      const entries = shelf().readDirectory();
      const names = [];
      for (let entry = entries.readDirectoryEntry(); entry; entry = entries.readDirectoryEntry()) {
        if (entry.type === 'regular-file') names.push(entry.name);
      }
      return names.sort();
    } catch (e) {
      throw reason(e);
    }
  },
  read(name) {
    try {
      const file = shelf().openAt({}, name, {}, { read: true });
      const size = file.stat().size;
      const [bytes] = file.read(size, 0n);
      return new TextDecoder().decode(bytes);
    } catch (e) {
      throw reason(e);
    }
  },
  write(name, text) {
    try {
      shelf().openAt({}, name, { create: true, truncate: true }, { write: true }).write(new TextEncoder().encode(text), 0n);
    } catch (e) {
      throw reason(e);
    }
  },
};
