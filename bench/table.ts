// A plain text table (console.table quotes every string): a row label, then
// one column per key found in the rows, in order of first appearance.

export type Row = Record<string, string | number>;

export function printTable(rows: Record<string, Row>, indent = '  '): void {
  const labels = Object.keys(rows);
  const columns = [...new Set(labels.flatMap((l) => Object.keys(rows[l])))];
  const cell = (v: string | number | undefined) => (v === undefined ? '' : typeof v === 'number' ? String(Math.round(v * 1000) / 1000) : v);
  const grid = [['', ...columns], ...labels.map((l) => [l, ...columns.map((c) => cell(rows[l][c]))])];
  const widths = grid[0].map((_, i) => Math.max(...grid.map((r) => r[i].length)));
  const line = (r: string[]) => indent + r.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ').trimEnd();
  console.log(line(grid[0]));
  for (const r of grid.slice(1)) console.log(line(r));
}
