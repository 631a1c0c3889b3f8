/**
 * The Alertmanager adapter: turns a webhook payload (already checked by the
 * `WebhookPayload` schema) into the notification the intake correlates, and
 * refuses with 400 what the schema cannot express.
 */
import { badRequest } from '../errors.ts';
import { parseInstant } from '../instant.ts';
import { formatDuration } from '../services/format-duration.ts';
import {
  HEARTBEAT_GROUP_PREFIX,
  storedGroupKey,
  type AlertGroupNotification,
  type AlertState,
} from '../domain/alerts.ts';
import {
  GO_ZERO_TIME,
  SUPPORTED_WEBHOOK_VERSION,
  WEBHOOK_LIMITS,
  type WebhookAlert,
  type WebhookPayload,
} from '@terdut/contract';

/**
 * How far ahead of this server's clock an alert may say it started. A start
 * in the future makes every later notification of the alert look like an
 * older occurrence, ignored (its real firing, its resolve), until that time
 * passes; beyond this it is a broken clock, and refusing it says so (the
 * group's next notification is applied as usual).
 */
export const MAX_START_AHEAD_MS = 60 * 60_000;

/**
 * Checks the version and the times, and turns wire values into stored ones;
 * a fingerprint listed twice keeps its later entry. `now` is the server's
 * clock, which no alert may start more than `MAX_START_AHEAD_MS` after.
 *
 * @example await intake.receive(parseNotification(request.body, clock.now()));
 */
export function parseNotification(payload: WebhookPayload, now: Date): AlertGroupNotification {
  if (payload.version !== SUPPORTED_WEBHOOK_VERSION) {
    throw badRequest(
      `field "version" is "${payload.version.slice(0, 20)}"; only Alertmanager webhook version "4" is supported`,
    );
  }
  if (Buffer.byteLength(payload.groupKey, 'utf8') > WEBHOOK_LIMITS.groupKeyBytes) {
    throw badRequest(`field "groupKey" is longer than ${WEBHOOK_LIMITS.groupKeyBytes} bytes (UTF-8)`);
  }
  if (payload.groupKey.startsWith(HEARTBEAT_GROUP_PREFIX)) {
    throw badRequest(
      `field "groupKey" must not start with "${HEARTBEAT_GROUP_PREFIX}": that names the incidents of missed ` +
        'heartbeats (Alertmanager\'s group keys start with "{")',
    );
  }
  // Long keys (every label under group_by: ['...']) are stored by digest.
  const groupKey = storedGroupKey(payload.groupKey);
  const alerts = new Map<string, AlertState>();
  payload.alerts.forEach((alert: WebhookAlert, index: number) => {
    let labelSize = 0;
    for (const [name, value] of Object.entries(alert.labels)) labelSize += name.length + value.length;
    if (labelSize > WEBHOOK_LIMITS.labelBytesPerAlert) {
      throw badRequest(
        `field "alerts.${index}.labels" is too large: ${labelSize} characters of names and values; ` +
          `at most ${WEBHOOK_LIMITS.labelBytesPerAlert}`,
      );
    }
    const startsAt = parseTime(alert.startsAt, `alerts.${index}.startsAt`);
    if (startsAt === null) throw badRequest(`field "alerts.${index}.startsAt" must be a real start time`);
    const ahead = startsAt.getTime() - now.getTime();
    if (ahead > MAX_START_AHEAD_MS) {
      throw badRequest(
        `field "alerts.${index}.startsAt" (${alert.startsAt}) is ${formatDuration(ahead)} ahead of this server's ` +
          `clock (${now.toISOString()}); at most ${formatDuration(MAX_START_AHEAD_MS)} is accepted: ` +
          'check the clock of the Prometheus that sent it, or the client that posted it to Alertmanager ' +
          'with an endsAt but no startsAt (Alertmanager then starts the alert at its endsAt)',
      );
    }
    const endsAt = alert.endsAt === undefined ? null : parseTime(alert.endsAt, `alerts.${index}.endsAt`);
    // Later entries win, as in Alertmanager's own merge of duplicates.
    alerts.set(alert.fingerprint, {
      fingerprint: alert.fingerprint,
      group_key: groupKey,
      name: alert.labels.alertname ?? '',
      status: alert.status,
      labels: alert.labels,
      annotations: alert.annotations ?? {},
      starts_at: startsAt,
      ends_at: endsAt,
      generator_url: alert.generatorURL ?? '',
      resolution_source: alert.status === 'resolved' ? 'alertmanager' : null,
    });
  });
  return {
    groupKey,
    groupLabels: payload.groupLabels ?? {},
    commonLabels: payload.commonLabels ?? {},
    commonAnnotations: payload.commonAnnotations ?? {},
    alerts: [...alerts.values()],
    // Alertmanager computes `status` after max_alerts cut the list: it says
    // nothing of the alerts left out, and neither does anything else here.
    ...((payload.truncatedAlerts ?? 0) > 0 ? { alertsLeftOut: true } : {}),
  };
}

const GO_ZERO_MS = Date.parse(GO_ZERO_TIME);
/**
 * The first instant RFC 3339 cannot write in UTC (a four-digit year), which
 * an offset can still reach ("9999-12-31T23:59:59-05:00"). Go's encoder,
 * Alertmanager's, refuses such times, and storing one would break every
 * timestamp written from it.
 */
const YEAR_10000_MS = Date.parse('+010000-01-01T00:00:00Z');

/** An RFC 3339 time as a Date; null for Go's zero time ("not set"). */
function parseTime(text: string, field: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) {
    throw badRequest(`field "${field}" must be an RFC 3339 timestamp, got "${text.slice(0, 40)}"`);
  }
  const ms = parseInstant(text)?.getTime();
  if (ms === undefined) {
    throw badRequest(`field "${field}" is not a real date and time: "${text.slice(0, 40)}"`);
  }
  if (ms >= YEAR_10000_MS) {
    throw badRequest(`field "${field}" must be before the year 10000 in UTC, got "${text.slice(0, 40)}"`);
  }
  return ms <= GO_ZERO_MS ? null : new Date(ms);
}
