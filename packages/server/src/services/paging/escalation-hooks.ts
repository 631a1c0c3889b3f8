/**
 * The hooks by which incident changes reach paging. Each runs inside the
 * transaction that makes the change, after the incident row is locked, so
 * the decision to page (or to stop) commits exactly when the change does:
 * a 2xx to Alertmanager means the escalation exists, even if the process
 * dies the next instant. The worker (escalation-worker.ts) does the rest.
 *
 * Lock order everywhere: incident row, then escalation row.
 */
import type { Queryable } from '../../db/database.ts';
import type { IncidentRow } from '../../repositories/incidents.ts';
import { insertEscalation, lockEscalation, updateEscalation } from '../../repositories/escalations.ts';
import { cancelPendingPages, insertDeliveries, pagedContacts } from '../../repositories/page-deliveries.ts';
import { choosePolicy } from './policy-routing.ts';

/** A new incident: route it to a policy and make its first step due now. */
export async function startPaging(
  tx: Queryable,
  incident: Pick<IncidentRow, 'id'>,
  labels: Record<string, string>,
  now: Date,
): Promise<void> {
  const { policyId, policy } = await choosePolicy(tx, labels);
  await insertEscalation(tx, { incident_id: incident.id, policy_id: policyId, policy, labels }, now);
}

/** Acknowledged: no further steps, and pages not yet sent are cancelled. */
export async function stopPaging(tx: Queryable, incidentId: number, now: Date): Promise<void> {
  const escalation = await lockEscalation(tx, incidentId);
  if (escalation === undefined) return;
  await updateEscalation(tx, incidentId, { state: 'stopped', due_at: null }, now);
  await cancelPendingPages(tx, incidentId);
}

/**
 * The acknowledgement was taken back: paging starts again at step 1 (a new
 * round). An incident from before paging existed gets its first escalation.
 */
export async function restartPaging(tx: Queryable, incident: IncidentRow, now: Date): Promise<void> {
  const escalation = await lockEscalation(tx, incident.id);
  if (escalation === undefined) {
    await startPaging(tx, incident, incident.group_labels, now);
    return;
  }
  await updateEscalation(
    tx,
    incident.id,
    { state: 'active', round: escalation.round + 1, step: 0, repeat: 0, due_at: now },
    now,
  );
}

/**
 * Snoozed: pages not yet sent are cancelled and the escalation waits for
 * the snooze to end; the worker then restarts it at step 1 if the incident
 * is still unacknowledged.
 */
export async function pausePaging(tx: Queryable, incidentId: number, until: Date, now: Date): Promise<void> {
  const escalation = await lockEscalation(tx, incidentId);
  if (escalation === undefined || escalation.state === 'stopped') return;
  await updateEscalation(tx, incidentId, { state: 'paused', due_at: until }, now);
  await cancelPendingPages(tx, incidentId);
}

/** The snooze was ended by hand: the worker looks now (and restarts at step 1). */
export async function resumePaging(tx: Queryable, incidentId: number, now: Date): Promise<void> {
  const escalation = await lockEscalation(tx, incidentId);
  if (escalation === undefined || escalation.state !== 'paused') return;
  await updateEscalation(tx, incidentId, { due_at: now }, now);
}

/**
 * Resolved (by hand or because its alerts resolved): paging ends, and
 * everyone who was paged gets a short "resolved" message when the policy
 * says so (the default).
 */
export async function endPaging(tx: Queryable, incidentId: number, now: Date): Promise<void> {
  const escalation = await lockEscalation(tx, incidentId);
  if (escalation === undefined) return;
  await updateEscalation(tx, incidentId, { state: 'stopped', due_at: null }, now);
  await cancelPendingPages(tx, incidentId);
  if (!escalation.policy.notify_on_resolve) return;
  const contacts = await pagedContacts(tx, incidentId);
  await insertDeliveries(
    tx,
    contacts.map((contact) => ({
      ...contact,
      incident_id: incidentId,
      purpose: 'resolved',
      round: 0,
      step: 0,
      repeat: 0,
    })),
    now,
  );
}

/**
 * A new alert joined, or the severity rose, while the incident is
 * acknowledged: the acknowledger is told once (the worker sends it). Only
 * real changes call this, so Alertmanager's repeated notifications do not.
 */
export async function noteUpdateForAcknowledger(
  tx: Queryable,
  incident: IncidentRow,
  now: Date,
): Promise<void> {
  if (incident.status !== 'acknowledged') return;
  const escalation = await lockEscalation(tx, incident.id);
  if (escalation === undefined) return;
  await updateEscalation(tx, incident.id, { updates: escalation.updates + 1, due_at: now }, now);
}
