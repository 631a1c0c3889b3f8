/**
 * Reading Prometheus text exposition (the operator's /metrics, the
 * kube-apiserver's /metrics) into samples, and summing counters by label,
 * for before/after deltas (operator benchmark, steady-state test).
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses `name{a="b",c="d"} 12` lines; comments and malformed lines are skipped. */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of `name` over the samples whose labels pass `keep`, grouped by `by(labels)`. */
export function sumBy(
  samples: Sample[],
  name: string,
  by: (labels: Record<string, string>) => string,
  keep: (labels: Record<string, string>) => boolean = () => true,
): Map<string, number> {
  const sums = new Map<string, number>();
  for (const sample of samples) {
    if (sample.name !== name || !keep(sample.labels)) continue;
    const key = by(sample.labels);
    sums.set(key, (sums.get(key) ?? 0) + sample.value);
  }
  return sums;
}

/** after - before, per key (keys only in `after` count from zero). */
export function delta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const result = new Map<string, number>();
  for (const [key, value] of after) result.set(key, value - (before.get(key) ?? 0));
  return result;
}

export const total = (sums: Map<string, number>): number => [...sums.values()].reduce((a, b) => a + b, 0);

const readVerbs = new Set(['get', 'list', 'watch', 'GET', 'LIST', 'WATCH']);

/** Splits verb -> count into reads (get, list, watch) and writes (everything else). */
export function readsAndWrites(byVerb: Map<string, number>): { reads: number; writes: number } {
  let reads = 0;
  let writes = 0;
  for (const [verb, count] of byVerb) {
    if (readVerbs.has(verb)) reads += count;
    else writes += count;
  }
  return { reads, writes };
}
