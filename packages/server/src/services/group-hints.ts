import { hash } from 'node:crypto';
import { alertContentDigest, type AlertState } from '../domain/alerts.ts';

/**
 * Which alert groups last sent exactly this: a hint that the next
 * notification of a group is a repeat (Alertmanager re-sends a group that
 * keeps firing every repeat_interval), so the intake tries the one-call
 * repeat first (repositories/alert-groups.ts, touchIfRepeat). Only a hint:
 * the database proves a repeat under the group's lock, and a stale or wrong
 * hint costs one round trip, never a wrong answer. Bounded: the oldest
 * groups are forgotten first.
 */
export class RepeatHints {
  readonly #last = new Map<string, string>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** True when `alerts` are what the group last sent, and all of them fire. */
  isRepeat(groupKey: string, alerts: AlertState[]): boolean {
    const last = this.#last.get(groupKey);
    return last !== undefined && signatureOf(alerts) === last;
  }

  /** After the full intake: remember what a group with an open incident sent, when it all fires. */
  remember(groupKey: string, alerts: AlertState[], hasOpenIncident: boolean): void {
    const signature = hasOpenIncident ? signatureOf(alerts) : undefined;
    this.#last.delete(groupKey);
    if (signature === undefined) return;
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
