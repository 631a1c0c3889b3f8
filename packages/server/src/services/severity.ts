/**
 * Orders the values people put in an alert's `severity` label, so an
 * incident's severity can be a high-water mark that is never lowered.
 * Unknown values rank lowest but still count when an incident has none yet.
 */
const RANKS: Record<string, number> = {
  critical: 5,
  page: 5,
  high: 4,
  error: 4,
  warning: 3,
  warn: 3,
  medium: 3,
  info: 2,
  low: 2,
  none: 1,
};

/**
 * Rank of a severity label value (case-insensitive); 0 for values we do not know.
 *
 * @example severityRank('critical') > severityRank('warning') // true
 */
export function severityRank(value: string): number {
  return RANKS[value.trim().toLowerCase()] ?? 0;
}

/**
 * Whether `candidate` raises an incident's severity from `current` (undefined:
 * none yet). Equal ranks keep the current value, so the first one named stays.
 */
export function raisesSeverity(
  current: { severity: string | null; severity_rank: number },
  candidate: string,
): boolean {
  if (current.severity === null) return true;
  return severityRank(candidate) > current.severity_rank;
}
