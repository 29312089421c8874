// One way to declare what rt reads from outside and check it: configuration
// values (lib/config/schema.ts), sidecars (lib/primary/sidecar.ts), an
// https: repository's index.json and its mirror's state. A shape is plain
// data; `check` says whether a parsed value (TOML, JSON, or a coerced
// environment variable) fits, and when it does not, where inside it and what
// was expected, in the words rt's one-line messages use ("expected an
// integer between 1 and 64, got 0"). `Static<S>` is the TypeScript type of a
// value that fits S, so a declaration and its type cannot drift apart.
// Each caller words the line around the problem (the layer or file, and how
// the offending value is shown); misfitLine() is the usual wording.
//
// Not TypeBox + Ajv: Ajv's errors would need a mapping layer about this
// module's size to give these messages, and Ajv costs every process at
// start-up, the workers included (importing it and compiling one
// sidecar-sized schema: 75-180 ms on a 2-core machine; checking a whole
// configuration with this module: 0.1 ms).

/** Where a value was read from, which changes what fits and how it is described: j-toml gives configuration files' integers as bigint (a number there is a float such as `4.0`); variables are words; sidecars and JSON files hold plain numbers. */
export type Source = 'file' | 'env' | 'data';

export type IntegerShape = { kind: 'integer'; min: number; max: number };
export type BooleanShape = { kind: 'boolean'; expected?: string };
/** Non-empty unless `empty`; `test`, when given, must pass too; `expected` words it. */
export type StringShape = { kind: 'string'; test?: (value: string) => boolean; expected?: string; empty?: boolean };
export type EnumShape = { kind: 'enum'; values: readonly string[] };
/** `values`, when given, restricts each item; `itemName` names such an item in messages. Or `item`: each item passes its test, `expected` words one. */
export type StringListShape = { kind: 'string-list'; values?: readonly string[]; itemName?: string; item?: { test: (item: string) => boolean; expected: string; expectedAll: string } };
export type UrlListShape = { kind: 'url-list'; schemes: readonly string[] };
export type ListShape = { kind: 'list'; item: Shape; expected: string };
/** String keys (each passing `key.test`, or `key.problem` says why not) to values of `item`. */
export type TableShape = { kind: 'table'; item: Shape; expected: string; key?: { test: (key: string) => boolean; problem: (key: string) => string } };
/** Known fields (an unknown one is named, with the known ones, unless `open`: then it is left out); `required` ones must be there. */
export type RecordShape = { kind: 'record'; fields: Readonly<Record<string, Shape>>; required: readonly string[]; expected: string; open?: boolean };

/** `null`, or a value of `inner`. */
export type NullableShape = { kind: 'nullable'; inner: Shape };

export type Shape = IntegerShape | BooleanShape | StringShape | EnumShape | StringListShape | UrlListShape | ListShape | TableShape | RecordShape | NullableShape;

export const integer = (min: number, max = Number.MAX_SAFE_INTEGER): IntegerShape => ({ kind: 'integer', min, max });
export const boolean = (expected?: string): BooleanShape => (expected === undefined ? { kind: 'boolean' } : { kind: 'boolean', expected });
export const string = (options: Omit<StringShape, 'kind'> = {}): StringShape => ({ kind: 'string', ...options });
export const oneOf = (values: readonly string[]): EnumShape => ({ kind: 'enum', values });
export const strings = (values?: readonly string[], itemName?: string): StringListShape => ({ kind: 'string-list', values, itemName });
/** A list of strings each of which passes `test`: `expected` words one (`an IP address`), `expectedAll` the list. */
export const stringsThat = (test: (item: string) => boolean, expected: string, expectedAll: string): StringListShape => ({ kind: 'string-list', item: { test, expected, expectedAll } });
export const urls = (...schemes: string[]): UrlListShape => ({ kind: 'url-list', schemes });
export const nullable = <I extends Shape>(inner: I): { kind: 'nullable'; inner: NoInfer<I> } => ({ kind: 'nullable', inner });
// NoInfer: a shape written inside another's declaration keeps its own type, not the Shape its place expects.
export const list = <I extends Shape>(item: I, expected: string): { kind: 'list'; item: NoInfer<I>; expected: string } => ({ kind: 'list', item, expected });
export const table = <I extends Shape>(item: I, expected: string, key?: TableShape['key']): { kind: 'table'; item: NoInfer<I>; expected: string; key?: TableShape['key'] } =>
  key ? { kind: 'table', item, expected, key } : { kind: 'table', item, expected };
export const record = <F extends Readonly<Record<string, Shape>>, R extends keyof F & string = never>(
  fields: F,
  expected: string,
  required: readonly R[] = [],
  open = false,
): { kind: 'record'; fields: NoInfer<F>; required: readonly NoInfer<R>[]; expected: string; open: boolean } => ({ kind: 'record', fields, required, expected, open });

/** The type of a value that fits `S`. */
export type Static<S> = S extends { kind: 'nullable'; inner: infer I }
  ? Static<I> | null
  : S extends { kind: 'list'; item: infer I }
  ? Static<I>[]
  : S extends { kind: 'table'; item: infer I }
    ? Record<string, Static<I>>
    : S extends { kind: 'record'; fields: infer F; required: readonly (infer R)[] }
      ? { -readonly [K in keyof F & R]: Static<F[K]> } & { -readonly [K in Exclude<keyof F, R>]?: Static<F[K]> }
      : S extends { kind: infer K extends keyof ScalarTypes }
        ? ScalarTypes[K]
        : never;

type ScalarTypes = { integer: number; boolean: boolean; string: string; enum: string; 'string-list': string[]; 'url-list': string[] };

/** Why a value does not fit: `at` is the path inside it (`allowed_paths[0].host`, `''` for the value itself); either what was expected there and what was found, or a problem in words. */
export type Misfit = { at: string; expected: string; got: unknown } | { at: string; problem: string };

export type Checked<T> = { ok: true; value: T } | ({ ok: false } & Misfit);

/**
 * A misfit in the words of rt's one-line messages, to follow the file it was
 * found in: `<at>: <problem>` or `<at>: expected <what>, got <value>`. `whole`
 * stands for `at` when the value itself does not fit (nothing by default);
 * `show` words the value found (", got …" is left out without it).
 */
export function misfitLine(misfit: Misfit, { whole, show }: { whole?: string; show?: (got: unknown) => string } = {}): string {
  const at = misfit.at || whole;
  const where = at === undefined ? '' : `${at}: `;
  if ('problem' in misfit) return where + misfit.problem;
  return `${where}expected ${misfit.expected}${show ? `, got ${show(misfit.got)}` : ''}`;
}

/** What `shape` expects, in words, after "expected". */
export function describe(shape: Shape, source: Source): string {
  switch (shape.kind) {
    case 'integer':
      return shape.max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${shape.min}` : `an integer between ${shape.min} and ${shape.max}`;
    case 'boolean':
      return shape.expected ?? (source === 'env' ? 'a boolean (true/false/1/0)' : 'a boolean (true or false)');
    case 'string':
      return shape.expected ?? 'a non-empty string';
    case 'enum':
      return `one of ${shape.values.join(', ')}`;
    case 'string-list':
      if (shape.item) return shape.item.expectedAll;
      return shape.values ? `an array of ${shape.itemName ?? 'item'}s (${shape.values.join(', ')})` : 'an array of non-empty strings';
    case 'url-list':
      return `an array of ${shape.schemes.join(' or ')} URLs`;
    case 'list':
    case 'table':
    case 'record':
      return shape.expected;
    case 'nullable':
      return `null or ${describe(shape.inner, source)}`;
  }
}

/** What each item of a list of strings expects, for a message about one bad item. */
function describeItem(shape: StringListShape | UrlListShape): string {
  if (shape.kind === 'url-list') return `a ${shape.schemes.join(' or ')} URL${shape.schemes.includes('file:') ? ' (a file: URL with its path: file:///srv/components)' : ''}`;
  if (shape.item) return shape.item.expected;
  return shape.values ? `one of ${shape.values.join(', ')}` : 'a non-empty string';
}

/** `value` checked against `shape`: the value as rt keeps it (integers as numbers, lists copied), or where and why it does not fit. */
export function check<S extends Shape>(shape: S, value: unknown, source: Source): Checked<Static<S>> {
  const misfit = find(shape, value, source, '');
  return misfit ? { ok: false, ...misfit } : { ok: true, value: normalised(shape, value) as Static<S> };
}

function find(shape: Shape, value: unknown, source: Source, at: string): Misfit | undefined {
  const wrong = (): Misfit => ({ at, expected: describe(shape, source), got: value });
  switch (shape.kind) {
    case 'integer': {
      const n = typeof value === 'bigint' ? value : source === 'data' && typeof value === 'number' && Number.isInteger(value) ? value : undefined;
      return n !== undefined && n >= shape.min && n <= shape.max ? undefined : wrong();
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : wrong();
    case 'string':
      return typeof value === 'string' && (shape.empty || value !== '') && (!shape.test || shape.test(value)) ? undefined : wrong();
    case 'enum':
      return typeof value === 'string' && shape.values.includes(value) ? undefined : wrong();
    case 'string-list':
    case 'url-list': {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return wrong();
      const i = value.findIndex((item: string) => !itemFits(shape, item));
      return i < 0 ? undefined : { at: `${at}[${i}]`, expected: describeItem(shape), got: value[i] };
    }
    case 'nullable':
      return value === null ? undefined : find(shape.inner, value, source, at);
    case 'list': {
      if (!Array.isArray(value)) return wrong();
      for (const [i, item] of value.entries()) {
        const misfit = find(shape.item, item, source, `${at}[${i}]`);
        if (misfit) return misfit;
      }
      return undefined;
    }
    case 'table': {
      if (!isTable(value)) return wrong();
      for (const [key, item] of Object.entries(value)) {
        if (shape.key && !shape.key.test(key)) return { at, problem: shape.key.problem(key) };
        const misfit = find(shape.item, item, source, `${at}.${key}`);
        if (misfit) return misfit;
      }
      return undefined;
    }
    case 'record': {
      if (!isTable(value)) return wrong();
      const known = Object.keys(shape.fields);
      for (const [key, item] of Object.entries(value)) {
        if (!Object.hasOwn(shape.fields, key)) {
          if (shape.open) continue;
          return { at, problem: `unknown key "${key}" (known: ${known.join(', ')})` };
        }
        const misfit = find(shape.fields[key], item, source, at === '' ? key : `${at}.${key}`);
        if (misfit) return misfit;
      }
      const missing = shape.required.find((key) => !Object.hasOwn(value, key));
      return missing === undefined ? undefined : { at: at === '' ? missing : `${at}.${missing}`, expected: describe(shape.fields[missing], source), got: undefined };
    }
  }
}

function normalised(shape: Shape, value: unknown): unknown {
  switch (shape.kind) {
    case 'integer':
      return Number(value);
    case 'string-list':
    case 'url-list':
      return [...(value as string[])];
    case 'nullable':
      return value === null ? null : normalised(shape.inner, value);
    case 'list':
      return (value as unknown[]).map((item) => normalised(shape.item, item));
    case 'table':
    case 'record': {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        const itemShape = shape.kind === 'table' ? shape.item : shape.fields[key];
        if (itemShape) out[key] = normalised(itemShape, item);
      }
      return out;
    }
    default:
      return value;
  }
}

function itemFits(shape: StringListShape | UrlListShape, item: string): boolean {
  if (shape.kind === 'string-list') return shape.item ? shape.item.test(item) : shape.values ? shape.values.includes(item) : item !== '';
  try {
    return shape.schemes.includes(new URL(item).protocol) && !NO_FILE_PATH.test(item);
  } catch {
    return false;
  }
}

/**
 * `file:`, `file://`, `file://host`: a file URL that names no path (the URL
 * parser reads it as `/`, and a scan of it as the working directory).
 * `file://.` and `file://..` name a relative path (docs/api.md §4).
 */
const NO_FILE_PATH = /^file:(?:\/\/(?!\.\.?$)[^/]*)?$/i;

/** A TOML or JSON table; j-toml's date-time values are objects too, but tagged otherwise. */
export function isTable(value: unknown): value is Record<string, unknown> {
  return Object.prototype.toString.call(value) === '[object Object]';
}
