// A configuration problem, as the user sees it: one line naming where it is
// (the layer: a file path or a variable name), which key, and what was
// expected. `rt` prints the message and exits 2, without a stack trace.

export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    /** The file path (as given) or the environment variable's name. */
    readonly layer: string,
    /** The dotted key path, when the problem is about one key. */
    readonly key: string | undefined,
    message: string,
  ) {
    // Parser messages and file contents may span lines; docs/api.md §2 promises one.
    super(message.replace(/\s*[\r\n]+\s*/g, ' '));
  }

  static expected(layer: string, key: string, expectation: string, got: unknown): ConfigError {
    return new ConfigError(layer, key, `${layer}: ${key}: expected ${expectation}, got ${describeGot(got)}`);
  }

  static unknownKey(layer: string, key: string, suggestion?: string): ConfigError {
    const hint = suggestion ? ` (did you mean ${suggestion}?)` : '';
    // A key holding a quoted TOML segment ("http.port" = 1) reads better in single quotes.
    const quoted = key.includes('"') ? `'${key}'` : `"${key}"`;
    return new ConfigError(layer, key, `${layer}: unknown key ${quoted}${hint}`);
  }

  /** A problem with the layer as a whole: unreadable file, invalid syntax. */
  static layer(layer: string, problem: string): ConfigError {
    return new ConfigError(layer, undefined, `${layer}: ${problem}`);
  }
}

const MAX_SHOWN = 60;

/**
 * A value as it appears after "got". Parsed documents hold integers as
 * bigint, so a JS number there is always a float: `80.0` is shown as such.
 */
function describeGot(value: unknown): string {
  const text = shown(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 3)}...` : text;
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(1) : String(value);
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return `[${value.map(shown).join(', ')}]`;
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag === 'Object') return 'a table';
  // j-toml's date/time classes (OffsetDateTime, LocalDate, ...) tag themselves.
  return `a TOML ${tag} ${String((value as { toISOString?: () => string }).toISOString?.() ?? '')}`.trimEnd();
}

/** The candidate closest to a mistyped name, if it is close enough to be a likely typo. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const candidate of candidates) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}
