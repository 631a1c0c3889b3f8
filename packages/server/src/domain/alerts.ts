/**
 * Alerts as the server's rules see them, whatever sent them: the intake
 * correlates `AlertGroupNotification`s, the Alertmanager adapter
 * (`alertmanager/parse.ts`) makes them, repositories store `AlertState`s.
 */
import { hash } from 'node:crypto';
import type { AlertStatus } from '@terdut/contract';

export type { AlertStatus } from '@terdut/contract';
/** `alertmanager`: a resolved notification said so; `expiry`: not refreshed for too long. */
export type AlertResolutionSource = 'alertmanager' | 'expiry';

/** The state of one occurrence of an alert, as a notification describes it. */
export interface AlertState {
  fingerprint: string;
  group_key: string;
  name: string;
  status: AlertStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  starts_at: Date;
  ends_at: Date | null;
  generator_url: string;
  resolution_source: AlertResolutionSource | null;
}

/**
 * One notification of an alert group's current state: dates are dates,
 * duplicates are gone. The whole group, unless `alertsLeftOut`.
 */
export interface AlertGroupNotification {
  groupKey: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  alerts: AlertState[];
  /**
   * The sender left alerts out (Alertmanager's `max_alerts`,
   * `truncatedAlerts`): one not listed may be firing, so the listed ones all
   * resolved do not make the group quiet.
   */
  alertsLeftOut?: boolean;
}

/**
 * A digest of what only a notification writes about an alert (its labels,
 * annotations, generator URL and start), stored beside it: a repeat is
 * recognised by comparing digests instead of the documents themselves
 * (migration 0950). Key order does not matter, as for a stored jsonb.
 * Computed once per alert object (a notification's alerts are not changed
 * once parsed): the intake asks for it up to three times per alert.
 */
export function alertContentDigest(
  alert: Pick<AlertState, 'labels' | 'annotations' | 'generator_url' | 'starts_at'>,
): string {
  let digest = digests.get(alert);
  if (digest === undefined) {
    digest = hash(
      'sha256',
      JSON.stringify([
        alert.starts_at.getTime(),
        alert.generator_url,
        sortedEntries(alert.labels),
        sortedEntries(alert.annotations),
      ]),
      'base64url',
    );
    digests.set(alert, digest);
  }
  return digest;
}

const digests = new WeakMap<object, string>();

function sortedEntries(map: Record<string, string>): [string, string][] {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The start of the group of a missed heartbeat's incident (`heartbeat:<id>`).
 * Alertmanager's group keys start with `{`; the webhook refuses this one, so
 * a notification can never join or resolve a heartbeat's incident.
 */
export const HEARTBEAT_GROUP_PREFIX = 'heartbeat:';

/**
 * The longest group key stored as it came, in bytes of UTF-8: group keys are
 * indexed, and a btree entry holds at most about 2,700 bytes.
 */
export const STORED_GROUP_KEY_BYTES = 2_000;

/**
 * The key a group is stored and locked under: the sender's own when it fits
 * `STORED_GROUP_KEY_BYTES`, else its beginning, `…sha256:` and the SHA-256
 * of the whole key (the same long key gives the same stored key, and two
 * that differ only past the beginning give two). Alertmanager writes every
 * grouping label into its key, all of them under `group_by: ['...']`, so
 * an alert within the webhook's label limits can make one far longer.
 *
 * @example storedGroupKey('{}:{alertname="DiskFull"}') === '{}:{alertname="DiskFull"}'
 */
export function storedGroupKey(groupKey: string): string {
  if (Buffer.byteLength(groupKey, 'utf8') <= STORED_GROUP_KEY_BYTES) return groupKey;
  const suffix = `…sha256:${hash('sha256', groupKey, 'hex')}`;
  let budget = STORED_GROUP_KEY_BYTES - Buffer.byteLength(suffix, 'utf8');
  let beginning = '';
  // Whole characters only, so that the stored key is valid UTF-8.
  for (const character of groupKey) {
    budget -= Buffer.byteLength(character, 'utf8');
    if (budget < 0) break;
    beginning += character;
  }
  return beginning + suffix;
}
