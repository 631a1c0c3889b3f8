/**
 * Builders of Alertmanager webhook (version 4) payloads for tests and
 * benchmarks: n alerts, any group key, firing or resolved, with the
 * fingerprints Alertmanager would give the same label sets.
 *
 * @example
 *   const payload = notification({ groupKey: 'g1', alerts: [firingAlert({ name: 'DiskFull', severity: 'critical' })] });
 *   await server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload, as: admin });
 */
import { createHash } from 'node:crypto';
import { GO_ZERO_TIME, type WebhookAlert, type WebhookPayload } from '@terdut/contract';

export { GO_ZERO_TIME };

/** One alert as it appears in the webhook's `alerts` array: the contract's, with every field the builders fill. */
export type WebhookAlertJson = Required<WebhookAlert> & { [extra: string]: unknown };

/** The contract's webhook payload, with every field the builders fill; tests may add or break any key. */
export type WebhookPayloadJson = Required<Omit<WebhookPayload, 'alerts'>> & {
  alerts: WebhookAlertJson[];
  [extra: string]: unknown;
};

export interface AlertSpec {
  /** The `alertname` label; default `TestAlert`. */
  name?: string;
  /** The `severity` label, when given. */
  severity?: string;
  /** More labels (they change the fingerprint, as in Alertmanager). */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: Date | string;
  /** For resolved alerts; default: `startsAt` + 1 minute. */
  endsAt?: Date | string;
  /** Default: derived from the labels. */
  fingerprint?: string;
  generatorURL?: string;
}

/** A stable 16-hex-digit fingerprint of a label set (Alertmanager uses a hash of the sorted labels too). */
export function fingerprintOf(labels: Record<string, string>): string {
  const canonical = Object.keys(labels)
    .sort()
    .map((key) => `${key}\u0000${labels[key]}`)
    .join('\u0001');
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

const DEFAULT_START = '2026-07-27T09:55:00Z';

function labelsOf(spec: AlertSpec): Record<string, string> {
  return {
    alertname: spec.name ?? 'TestAlert',
    ...(spec.severity !== undefined ? { severity: spec.severity } : {}),
    ...spec.labels,
  };
}

function time(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

/** A firing alert; `endsAt` is Go's zero time, as Alertmanager sends it. */
export function firingAlert(spec: AlertSpec = {}): WebhookAlertJson {
  const labels = labelsOf(spec);
  return {
    status: 'firing',
    labels,
    annotations: spec.annotations ?? { summary: `${labels.alertname} is firing` },
    startsAt: time(spec.startsAt ?? DEFAULT_START),
    endsAt: GO_ZERO_TIME,
    generatorURL: spec.generatorURL ?? 'http://prometheus.example:9090/graph?g0.expr=up',
    fingerprint: spec.fingerprint ?? fingerprintOf(labels),
  };
}

/** The same alert resolved (same labels, fingerprint and startsAt). */
export function resolvedAlert(spec: AlertSpec = {}): WebhookAlertJson {
  const firing = firingAlert(spec);
  const endsAt = spec.endsAt ?? new Date(new Date(firing.startsAt).getTime() + 60_000);
  return { ...firing, status: 'resolved', endsAt: time(endsAt) };
}

export interface NotificationSpec {
  groupKey?: string;
  alerts: WebhookAlertJson[];
  groupLabels?: Record<string, string>;
  receiver?: string;
  version?: string;
  truncatedAlerts?: number;
  /** Extra top-level keys (e.g. future fields the server must ignore). */
  extra?: Record<string, unknown>;
}

/** A whole notification; `status` is `firing` while any alert fires, as in Alertmanager. */
export function notification(spec: NotificationSpec): WebhookPayloadJson {
  const groupLabels = spec.groupLabels ?? { alertname: spec.alerts[0]?.labels.alertname ?? 'TestAlert' };
  const common = (pick: (alert: WebhookAlertJson) => Record<string, string>): Record<string, string> => {
    const [first, ...rest] = spec.alerts;
    if (first === undefined) return {};
    return Object.fromEntries(
      Object.entries(pick(first)).filter(([key, value]) => rest.every((alert) => pick(alert)[key] === value)),
    );
  };
  return {
    receiver: spec.receiver ?? 'terdut',
    status: spec.alerts.some((alert) => alert.status === 'firing') ? 'firing' : 'resolved',
    alerts: spec.alerts,
    groupLabels,
    commonLabels: common((alert) => alert.labels),
    commonAnnotations: common((alert) => alert.annotations),
    externalURL: 'http://alertmanager.example:9093',
    version: spec.version ?? '4',
    groupKey: spec.groupKey ?? `{}:${JSON.stringify(groupLabels)}`,
    truncatedAlerts: spec.truncatedAlerts ?? 0,
    ...spec.extra,
  };
}

/**
 * A notification of `count` alerts of one group (`instance` labels
 * `host-0`…), all firing or all resolved: the shape benchmarks post.
 */
export function notificationOfSize(
  count: number,
  options: {
    groupKey?: string;
    name?: string;
    status?: 'firing' | 'resolved';
    severity?: string;
    startsAt?: Date | string;
  } = {},
): WebhookPayloadJson {
  const name = options.name ?? 'LoadTest';
  const build = options.status === 'resolved' ? resolvedAlert : firingAlert;
  const alerts = Array.from({ length: count }, (_, index) =>
    build({
      name,
      labels: { instance: `host-${index}` },
      ...(options.severity !== undefined ? { severity: options.severity } : {}),
      ...(options.startsAt !== undefined ? { startsAt: options.startsAt } : {}),
    }),
  );
  return notification({
    groupKey: options.groupKey ?? `{}:{alertname="${name}"}`,
    alerts,
    groupLabels: { alertname: name },
  });
}
