// The first line of an error's message: what goes into a one-line report
// (a listing's `failed` entry, a reload answer), without a stack or a
// transpiler's multi-line dump.

export function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0].trim();
}
