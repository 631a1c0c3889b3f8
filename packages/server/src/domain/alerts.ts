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
