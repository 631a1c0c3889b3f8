/**
 * "An incident exists": opened the way production opens one, by an
 * Alertmanager notification to the webhook, so the intake, the paging outbox
 * and the change feed all see it.
 *
 * @example
 *   const { id, incident } = await openIncident(server, admin, { name: 'DiskFull', severity: 'critical' });
 */
import assert from 'node:assert/strict';
import type { Incident } from '@terdut/contract';
import type { TestApp, TestUser } from './app.ts';
import {
  firingAlert,
  notification,
  type AlertSpec,
  type WebhookAlertJson,
  type WebhookPayloadJson,
} from './alertmanager-payloads.ts';

export interface IncidentSpec extends AlertSpec {
  /** The Alertmanager group; default: a new one per call, so each call opens its own incident. */
  groupKey?: string;
}

export interface OpenedIncident {
  id: number;
  /** The incident as `GET /api/incidents/{id}` answers right after. */
  incident: Incident;
  /** What was posted, to send the group again (repeats, a joining alert, a resolution). */
  payload: WebhookPayloadJson;
  alert: WebhookAlertJson;
}

let groups = 0;

/** Posts a notification to the Alertmanager webhook as `as`; fails the test unless it answered 200. */
export async function postNotification(
  server: Pick<TestApp, 'request'>,
  as: TestUser | string,
  payload: WebhookPayloadJson,
): Promise<{ incident_id?: number }> {
  const answer = await server.request({ method: 'POST', url: '/api/webhook/alertmanager', payload, as });
  assert.equal(answer.status, 200, `the webhook refused the notification: ${JSON.stringify(answer.body)}`);
  return answer.body as { incident_id?: number };
}

/** Posts one firing alert as `as` (any signed-in key may post) and fails the test unless it opened an incident. */
export async function openIncident(
  server: Pick<TestApp, 'request'>,
  as: TestUser | string,
  spec: IncidentSpec = {},
): Promise<OpenedIncident> {
  groups += 1;
  const { groupKey = `test-incident-${process.pid}-${groups}`, ...alertSpec } = spec;
  const alert = firingAlert(alertSpec);
  const payload = notification({ groupKey, alerts: [alert] });
  const answer = await postNotification(server, as, payload);
  const id = answer.incident_id;
  assert.ok(
    id !== undefined,
    `no incident opened (a heartbeat or a resolved group?): ${JSON.stringify(answer)}`,
  );
  const read = await server.request({ method: 'GET', url: `/api/incidents/${id}`, as });
  assert.equal(read.status, 200, JSON.stringify(read.body));
  return { id, incident: read.body as Incident, payload, alert };
}
