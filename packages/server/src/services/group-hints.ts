import { hash } from 'node:crypto';
import { alertContentDigest, type AlertState } from '../domain/alerts.ts';

// A group this replica has seen whose next notification is no repeat it can name.
const SEEN = '';

/**
 * What this replica knows of each alert group's last notification: hints
 * that let the intake try a one-call shortcut first.
 * - A group it never saw is probably new: its first notification opens an
 *   incident (repositories/alert-groups.ts, openIfNewGroup).
 * - A group that last sent exactly this, all firing, with an open incident,
 *   is probably repeating (Alertmanager re-sends a group that keeps firing
 *   every repeat_interval; touchIfRepeat).
 * Only hints: the database proves each shortcut under the group's lock, and a
 * stale or wrong hint (another replica's notification, a restart) costs one
 * round trip, never a wrong answer. Bounded: the oldest groups are forgotten first.
 */
export class GroupHints {
  readonly #last = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** True when this replica has no record of the group. */
  isUnseen(groupKey: string): boolean {
    return !this.#last.has(groupKey);
  }

  /** True when `alerts` are what the group last sent, and all of them fire. */
  isRepeat(groupKey: string, alerts: AlertState[]): boolean {
    const last = this.#last.get(groupKey);
    return last !== undefined && last !== SEEN && signatureOf(alerts) === last;
  }

  /** After a notification was applied: remember the group, and what it sent when it may repeat. */
  remember(groupKey: string, alerts: AlertState[], hasOpenIncident: boolean): void {
    const signature = (hasOpenIncident ? signatureOf(alerts) : undefined) ?? SEEN;
    this.#last.delete(groupKey);
    this.#last.set(groupKey, signature);
    if (this.#last.size > this.#limit) this.#last.delete(this.#last.keys().next().value!);
  }
}

/** Everything the repeat check compares, digested; undefined unless every alert fires. */
function signatureOf(alerts: AlertState[]): string | undefined {
  if (alerts.length === 0 || alerts.some((alert) => alert.status !== 'firing')) return undefined;
  const parts = alerts.map((alert) =>
    JSON.stringify([
      alert.fingerprint,
      alert.group_key,
      alert.ends_at?.getTime() ?? null,
      alertContentDigest(alert),
    ]),
  );
  return hash('sha256', parts.join('\n'), 'base64url');
}
