import type { Queryable } from '../db/database.ts';
import { updateIncident, type IncidentRow } from '../repositories/incidents.ts';
import { hasFiringAlerts } from '../repositories/incident-alerts.ts';
import { insertEvents } from '../repositories/incident-events.ts';
import { endPaging } from './paging/escalation-hooks.ts';

/**
 * Resolves an open incident once none of its alerts is firing
 * (`resolution_source: alerts`), with its `resolved` event. Returns the
 * resolved incident, or undefined when it stays open. Call with the
 * incident's group locked (intake, staleness sweep).
 *
 * `leftOutAfter`: for callers that saw no notification of the whole
 * group (the staleness sweep), an incident whose group's notification left
 * alerts out after this instant (`alerts_left_out_at`, max_alerts) stays
 * open. The intake applying a notification of the whole group leaves it out.
 */
export async function resolveIfAllAlertsResolved(
  tx: Queryable,
  incident: IncidentRow,
  now: Date,
  leftOutAfter: Date | null = null,
): Promise<IncidentRow | undefined> {
  if (incident.status === 'resolved') return undefined;
  if (await hasFiringAlerts(tx, incident.id, leftOutAfter)) return undefined;
  await endPaging(tx, incident.id, now);
  const resolved = await updateIncident(tx, incident.id, {
    status: 'resolved',
    resolved_at: now,
    resolution_source: 'alerts',
  });
  await insertEvents(
    tx,
    [{ incident_id: incident.id, type: 'resolved', detail: 'every alert resolved' }],
    now,
  );
  return resolved;
}
