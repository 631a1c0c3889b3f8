/**
 * A duration in the Go style people configure it in (`6h`, `1h30m`, `90s`),
 * for messages and timeline details.
 *
 * @example formatDuration(5_400_000) // '1h30m'
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  let seconds = Math.round(ms / 1000);
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return `${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${seconds ? `${seconds}s` : ''}` || '0s';
}
