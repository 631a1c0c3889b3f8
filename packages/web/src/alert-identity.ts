/**
 * What tells an incident's alerts apart. The server names an alert in the
 * timeline by its name alone, and an incident is often one alert name on many
 * targets: ten `HighCPU added` say nothing about which is which. The labels
 * every alert of the incident shares (alertname, job, severity) say nothing
 * either; those that differ (instance, pod) do.
 */
import type { Alert } from '@terdut/client';

/** Enough to tell alerts apart at a glance on a phone; the alert card lists every label. */
const MAX_LABELS = 3;
const MAX_VALUE_CHARS = 40;

/**
 * Each alert's labels that are not the same for every alert of `alerts`, as
 * short text by alert id (`instance=db-3:9100, pod=api-7`): at most three,
 * those with the most distinct values first (they tell the most alerts
 * apart), long values cut with `…`. `alertname` is left out (the timeline
 * says the name already); an alert with nothing of its own has no entry.
 *
 * @example alertIdentities([{ id: 1, labels: { alertname: 'HighCPU', instance: 'db-3' } }, { id: 2, labels: { alertname: 'HighCPU', instance: 'db-4' } }]).get(1) // 'instance=db-3'
 */
export function alertIdentities(alerts: readonly Pick<Alert, 'id' | 'labels'>[]): Map<number, string> {
  // A label missing from some alerts differs too: it is undefined there.
  const values = new Map<string, Set<string | undefined>>();
  for (const alert of alerts)
    for (const name of Object.keys(alert.labels)) if (!values.has(name)) values.set(name, new Set());
  for (const [name, seen] of values) for (const alert of alerts) seen.add(alert.labels[name]);
  const telling = [...values]
    .filter(([name, seen]) => name !== 'alertname' && seen.size > 1)
    .sort(([a, seenA], [b, seenB]) => seenB.size - seenA.size || (a < b ? -1 : a > b ? 1 : 0))
    .map(([name]) => name);
  const identities = new Map<number, string>();
  for (const alert of alerts) {
    const own = telling.filter((name) => alert.labels[name] !== undefined);
    if (own.length === 0) continue;
    const shown = own.slice(0, MAX_LABELS).map((name) => `${name}=${cut(alert.labels[name]!)}`);
    if (own.length > MAX_LABELS) shown.push(`+${own.length - MAX_LABELS} more`);
    identities.set(alert.id, shown.join(', '));
  }
  return identities;
}

/** `value`, or its start and `…` when longer than MAX_VALUE_CHARS (by code point: an emoji is not split). */
function cut(value: string): string {
  const chars = [...value];
  return chars.length <= MAX_VALUE_CHARS ? value : `${chars.slice(0, MAX_VALUE_CHARS - 1).join('')}…`;
}
