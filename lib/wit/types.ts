// The runtime's model of a component's interface, as decoded from the component
// binary (see reader.ts). It is structural: every type is spelled out in full
// where it is used, and nominal types (records, variants, enums, flags,
// resources, aliases) carry the name they were exported under so that the WIT
// printer and the JSON Schema generator can name them.
//
// WIT types cannot be recursive (only resources can refer back to themselves,
// and they do so by name), so a plain tree is enough.

export type PrimitiveName =
  | 'bool'
  | 'u8' | 'u16' | 'u32' | 'u64'
  | 's8' | 's16' | 's32' | 's64'
  | 'f32' | 'f64'
  | 'char'
  | 'string'
  | 'error-context';

/** Where a named type was defined: the interface that exported it. */
export interface TypeOrigin {
  /** Fully qualified interface name, e.g. `acme:greeter/types@1.0.0`, or `''` for the world. */
  interface: string;
  /** The name the type was exported under, e.g. `person`. */
  name: string;
}

export interface Field {
  name: string;
  type: WitType;
}

export interface Case {
  name: string;
  /** `null` for a case without payload. */
  type: WitType | null;
}

export type WitType =
  | { kind: 'primitive'; name: PrimitiveName; origin?: TypeOrigin }
  | { kind: 'list'; element: WitType; origin?: TypeOrigin }
  /** `list<T, N>` (fixed length) */
  | { kind: 'fixed-list'; element: WitType; length: number; origin?: TypeOrigin }
  | { kind: 'tuple'; elements: WitType[]; origin?: TypeOrigin }
  | { kind: 'option'; inner: WitType; origin?: TypeOrigin }
  | { kind: 'result'; ok: WitType | null; err: WitType | null; origin?: TypeOrigin }
  | { kind: 'record'; fields: Field[]; origin?: TypeOrigin }
  | { kind: 'variant'; cases: Case[]; origin?: TypeOrigin }
  | { kind: 'enum'; cases: string[]; origin?: TypeOrigin }
  | { kind: 'flags'; flags: string[]; origin?: TypeOrigin }
  /** A resource handle. `resource` is the resource's name (its origin says where it lives). */
  | { kind: 'own' | 'borrow'; resource: string; origin?: TypeOrigin }
  | { kind: 'stream' | 'future'; element: WitType | null; origin?: TypeOrigin };


export interface Param {
  name: string;
  type: WitType;
}

export interface WitFunction {
  /**
   * The function name exactly as in WIT. Resource functions keep the component
   * model's decorated names: `[constructor]blob`, `[method]blob.read`, `[static]blob.open`.
   */
  name: string;
  params: Param[];
  /** `null` for a function without a result. */
  result: WitType | null;
  /** Declared `async` (component model async ABI). */
  async?: boolean;
}

/** What a decorated resource function name says: `[method]blob.read` is the method `read` of `blob`. */
export interface ResourceFunctionName {
  kind: 'constructor' | 'method' | 'static';
  resource: string;
  /** The method's name; absent for a constructor. */
  member?: string;
}

const DECORATED = /^\[(constructor|method|static)\]([^.]+)(?:\.(.+))?$/;

/** The resource function a decorated name names; undefined for a plain function name. */
export function resourceFunctionName(name: string): ResourceFunctionName | undefined {
  const m = DECORATED.exec(name);
  if (!m) return undefined;
  const decoded: ResourceFunctionName = { kind: m[1] as ResourceFunctionName['kind'], resource: m[2] };
  if (m[3] !== undefined) decoded.member = m[3];
  return decoded;
}

/** A type definition exported by an interface (what WIT writes as `record x {..}`, `type x = ..`, `resource x`). */
export interface TypeDefinition {
  name: string;
  /** `{kind:'resource'}` for `resource x;`, otherwise the defined type (whose `origin` names it). */
  type: WitType | { kind: 'resource'; origin?: TypeOrigin };
}

export interface PackageName {
  namespace: string;
  name: string;
  /** Semver without a leading `v`, or undefined when unversioned. */
  version?: string;
}

export interface WitInterface {
  /** Fully qualified, e.g. `acme:greeter/greeter@1.0.0`; a bare name for an inline (world-level) interface export. */
  name: string;
  /** Parsed from `name` when qualified. */
  package?: PackageName;
  /** The interface's own name, e.g. `greeter`. */
  interfaceName: string;
  types: TypeDefinition[];
  functions: WitFunction[];
}

export type ExternKind = 'instance' | 'function' | 'type' | 'component' | 'module' | 'value';

export interface ImportedItem {
  /** As written in the binary, e.g. `wasi:io/streams@0.2.3` or a bare world-level name. */
  name: string;
  kind: ExternKind;
  /** For imported instances: the functions it needs (so stubs can be generated). */
  functions?: WitFunction[];
  /** For imported instances: the types it exports (resources included). */
  types?: TypeDefinition[];
  /** For a world-level imported function: its signature. */
  function?: WitFunction;
}

/** Everything the runtime needs to know about a component's outside. */
export interface ComponentInterface {
  imports: ImportedItem[];
  /** Exported interfaces (instances), in export order. */
  interfaces: WitInterface[];
  /** World-level exported functions, in export order. */
  functions: WitFunction[];
  /** World-level exported types (rare: only types used by world-level functions). */
  types: TypeDefinition[];
  /** A string encoding other than UTF-8 that one of its canonical definitions uses; absent when strings are UTF-8 throughout. */
  stringEncoding?: 'utf16' | 'latin1+utf16';
}

/** Parses `ns:pkg/iface@1.2.3` (and `ns:pkg/iface`) into its parts; undefined for a bare name. */
export function parseInterfaceName(name: string): { package: PackageName; interfaceName: string } | undefined {
  const m = /^([^:/@]+):([^:/@]+)\/([^:/@]+)(?:@(.+))?$/.exec(name);
  if (!m) return undefined;
  const pkg: PackageName = { namespace: m[1], name: m[2] };
  if (m[4] !== undefined) pkg.version = m[4];
  return { package: pkg, interfaceName: m[3] };
}

/** The types a value of `t` directly holds (a list's element, a record's fields, a result's sides...); none for scalars, enums, flags and handles. */
export function innerTypes(t: WitType): WitType[] {
  switch (t.kind) {
    case 'list':
    case 'fixed-list':
      return [t.element];
    case 'option':
      return [t.inner];
    case 'tuple':
      return t.elements;
    case 'record':
      return t.fields.map((f) => f.type);
    case 'variant':
      return t.cases.flatMap((c) => (c.type ? [c.type] : []));
    case 'result':
      return [t.ok, t.err].filter((x): x is WitType => x !== null);
    default:
      return [];
  }
}

/** True when values of this type (anywhere inside it) are resource handles, which JSON cannot carry. */
export function containsResource(t: WitType): boolean {
  switch (t.kind) {
    case 'own':
    case 'borrow':
    case 'stream':
    case 'future':
      return true;
    case 'primitive':
      return t.name === 'error-context';
    default:
      return innerTypes(t).some(containsResource);
  }
}

/** `list<u8>`: carried as raw bytes in HTTP bodies. */
export function isBytes(t: WitType | null): boolean {
  return t?.kind === 'list' && t.element.kind === 'primitive' && t.element.name === 'u8';
}

/** Whether the function's result (or, for result<T, E>, its ok value) is list<u8>. */
export function bytesResult(fn: WitFunction): boolean {
  return isBytes(fn.result?.kind === 'result' ? fn.result.ok : fn.result);
}
