/** Latency samples in milliseconds and their percentiles (nearest-rank). */
export class LatencyRecorder {
  readonly #samples: number[] = [];

  record(ms: number): void {
    this.#samples.push(ms);
  }

  get count(): number {
    return this.#samples.length;
  }

  /** The p-th percentile (0 < p <= 100) by nearest rank; NaN without samples. */
  percentile(p: number): number {
    if (this.#samples.length === 0) return Number.NaN;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return sorted[rank - 1]!;
  }
}

/** `12.3` → `"12.3 ms"`, with a precision that suits the magnitude. */
export function formatMs(ms: number): string {
  if (Number.isNaN(ms)) return '-';
  return ms < 10 ? `${ms.toFixed(2)} ms` : ms < 100 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** Prints rows as an aligned text table (also valid Markdown). */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}
