// How a host matches an import to its implementation: by interface and
// version line, as wasmtime's linker does. Versions on one line are
// compatible (a host of `wasi:io/streams@0.2.0` serves a guest built against
// 0.2.3); lines differ in their ABI, so `wasi:http/types@0.3.0` must never
// bind to 0.2 code. The line is the major version, or for 0.x the minor
// (0.2, 0.3); a 0.0.x version is a line of its own.

/** `0.2.3` → `0.2`, `1.4.0` → `1`, `0.2.0-draft` → `0.2`, `0.0.5` → `0.0.5`. */
export function versionLine(version: string): string {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) return version;
  const [, major, minor] = match;
  if (major !== '0') return major;
  if (minor !== '0') return `0.${minor}`;
  return version;
}

/** `wasi:io/streams@0.2.3` → `wasi:io/streams@0.2`; a name without a version stays as it is. */
export function interfaceKey(name: string): string {
  const at = name.indexOf('@');
  return at === -1 ? name : `${name.slice(0, at)}@${versionLine(name.slice(at + 1))}`;
}

/** `wasi:io/streams@0.2.3` → `wasi:io/streams`: how jco's glue names its imports. */
export function unversioned(name: string): string {
  const at = name.indexOf('@');
  return at === -1 ? name : name.slice(0, at);
}
