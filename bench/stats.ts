// Small statistics and formatting helpers shared by the benchmark sections.

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function min(values: readonly number[]): number {
  return values.length === 0 ? NaN : Math.min(...values);
}

export function max(values: readonly number[]): number {
  return values.length === 0 ? NaN : Math.max(...values);
}

/** Highest over lowest, to two decimals: how far apart the runs of one target were. */
export function spread(values: readonly number[]): string {
  return ratio(max(values), min(values));
}

export function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** `a / b` to two decimals, or "n/a" when either side is missing. */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? (a / b).toFixed(2) : 'n/a';
}

export function fixed(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/** A rate in thousands with one decimal ("27.9k"), for compact series. */
export function kilo(n: number): string {
  return Number.isFinite(n) ? `${(n / 1000).toFixed(1)}k` : 'n/a';
}

export function passMiss(ok: boolean): 'PASS' | 'MISS' {
  return ok ? 'PASS' : 'MISS';
}

/** Milliseconds since `started` (a performance.now() reading). */
export function since(started: number): number {
  return performance.now() - started;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
