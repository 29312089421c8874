// How the WIT⇄JSON codec reports a request body that does not fit a signature.
//
// Decoders do not carry the JSON path down with them: building `p.tags[2]` for
// every value on the success path would allocate on each call. Instead a
// decoder throws a `Mismatch` that knows only where it is relative to the value
// it was given, and each container prepends its own step (`.field`, `[i]`) as
// the exception unwinds. The public `CodecError` is made once, at the top.

/** A JSON value that does not fit its WIT type, as the HTTP layer reports it (400). */
export class CodecError extends Error {
  override readonly name = 'CodecError';
  /** JSON path of the offending value, from the parameter name: `p.tags[2]`; `''` for the body itself. */
  readonly path: string;
  /** The WIT type that was expected there, as WIT spells it: `u8 (0..255)`, `record person`. */
  readonly expected: string;
  /** Set when the value is a handle that cannot be passed (handles.ts): it answers as 404 or 410 rather than 400. */
  handle?: 'unknown' | 'ended';

  constructor(path: string, expected: string, detail: string) {
    super(path === '' ? detail : `${path}: ${detail}`);
    this.path = path;
    this.expected = expected;
  }
}

/**
 * Thrown by decoders; deliberately not an `Error` (no stack to capture).
 * `suffix` grows from the inside out: `[2]`, then `.tags[2]`.
 */
export class Mismatch {
  suffix = '';
  constructor(
    readonly expected: string,
    readonly detail: string,
  ) {}

  /** Prepends one path step and rethrows; used in `catch` blocks of container decoders. */
  static within(e: unknown, step: string): never {
    if (e instanceof Mismatch) e.suffix = step + e.suffix;
    throw e;
  }

  toCodecError(path: string): CodecError {
    const suffix = path === '' && this.suffix.startsWith('.') ? this.suffix.slice(1) : this.suffix;
    return new CodecError(path + suffix, this.expected, this.detail);
  }
}

/** The usual complaint: `expected <type>, got <value>`, with an optional remark after it. */
export function mismatch(expected: string, got: unknown, remark?: string): Mismatch {
  const detail = `expected ${expected}, got ${preview(got)}`;
  return new Mismatch(expected, remark === undefined ? detail : `${detail} (${remark})`);
}

const PREVIEW_LIMIT = 60;

/**
 * The JSON text of `value`, cut to about 60 characters. Serialises only as much
 * as it shows, so a bad 10 MB body costs no more than a small one.
 */
export function preview(value: unknown): string {
  const out: string[] = [];
  let length = 0;
  const push = (s: string): boolean => {
    out.push(s);
    length += s.length;
    return length <= PREVIEW_LIMIT;
  };
  const write = (v: unknown): boolean => {
    if (v === undefined) return push('nothing');
    if (typeof v === 'bigint') return push(v.toString());
    if (v === null || typeof v !== 'object') {
      // NaN and ±Infinity are not JSON; show them as JS does rather than as `null`.
      if (typeof v === 'number' && !Number.isFinite(v)) return push(String(v));
      return push(JSON.stringify(v) ?? typeof v);
    }
    if (Array.isArray(v) || ArrayBuffer.isView(v)) {
      const items = v as ArrayLike<unknown>;
      if (!push('[')) return false;
      for (let i = 0; i < items.length; i++) {
        if (i > 0 && !push(',')) return false;
        if (!write(items[i])) return false;
      }
      return push(']');
    }
    if (!push('{')) return false;
    let first = true;
    for (const [k, item] of Object.entries(v)) {
      if (!first && !push(',')) return false;
      first = false;
      if (!push(`${JSON.stringify(k)}:`) || !write(item)) return false;
    }
    return push('}');
  };
  write(value);
  const text = out.join('');
  if (text.length <= PREVIEW_LIMIT) return text;
  let cut = PREVIEW_LIMIT - 3;
  // Never end on half a surrogate pair.
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${text.slice(0, cut)}...`;
}
