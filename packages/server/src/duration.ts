/**
 * Go-style durations as Go's `time.ParseDuration` reads them (`30m`, `2h`,
 * `1h30m`, `1.5h`, `.5h`, `90s`, `500ms`, `+1h`, `0`; `us`/`µs`/`ns` too,
 * rounded to milliseconds), as the contract's snooze and Alertmanager's
 * configuration write them. `allowDays` also accepts `d` (24h), for settings
 * like retention that span months. Negative durations are not durations here.
 *
 * @example parseDuration('1h30m') // 5_400_000
 * @returns milliseconds, or undefined when `text` is not a duration
 */
export function parseDuration(text: string, options: { allowDays?: boolean } = {}): number | undefined {
  const units: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3, // U+00B5, as Go writes it
    μs: 1e-3, // U+03BC
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  if (options.allowDays) units.d = 86_400_000;
  const body = text.startsWith('+') ? text.slice(1) : text;
  if (body === '0') return 0;
  const pattern = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y;
  if (body.length === 0) return undefined;
  let total = 0;
  pattern.lastIndex = 0;
  while (pattern.lastIndex < body.length) {
    const match = pattern.exec(body);
    if (!match) return undefined;
    const unit = units[match[2]!];
    if (unit === undefined) return undefined;
    total += Number(match[1]) * unit;
  }
  return Math.round(total);
}
