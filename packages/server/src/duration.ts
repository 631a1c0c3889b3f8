/**
 * Go-style durations (`30m`, `2h`, `1h30m`, `1.5h`, `90s`, `500ms`), as the
 * contract's snooze and Alertmanager's configuration write them. `allowDays`
 * also accepts `d` (24h), for settings like retention that span months.
 *
 * @example parseDuration('1h30m') // 5_400_000
 * @returns milliseconds, or undefined when `text` is not a duration
 */
export function parseDuration(text: string, options: { allowDays?: boolean } = {}): number | undefined {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (options.allowDays) units.d = 86_400_000;
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;
  if (text.length === 0) return undefined;
  let total = 0;
  pattern.lastIndex = 0;
  while (pattern.lastIndex < text.length) {
    const match = pattern.exec(text);
    if (!match) return undefined;
    const unit = units[match[2]!];
    if (unit === undefined) return undefined;
    total += Number(match[1]) * unit;
  }
  return Math.round(total);
}
