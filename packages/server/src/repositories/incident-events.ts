import type { Queryable } from '../db/database.ts';

/** Timeline event types (api-contract.md); clients render unknown ones generically. */
export type IncidentEventType =
  | 'triggered'
  | 'alert_added'
  | 'alert_resolved'
  | 'acknowledged'
  | 'unacknowledged'
  | 'assigned'
  | 'snoozed'
  | 'unsnoozed'
  | 'resolved'
  | 'note'
  // Paging (services/paging): a message accepted by its provider, one given
  // up on, a step of the escalation policy firing, the policy exhausted.
  | 'notified'
  | 'notification_failed'
  | 'escalated'
  | 'escalation_finished'
  // A maintenance window holds the incident's paging until it ends.
  | 'paging_held';

export interface IncidentEventRow {
  id: number;
  incident_id: number;
  type: IncidentEventType;
  user_id: number | null;
  /** Kept after the user is deleted (soft delete). */
  username: string | null;
  alert_id: number | null;
  detail: string | null;
  created_at: Date;
}

export interface NewIncidentEvent {
  incident_id: number;
  type: IncidentEventType;
  user_id?: number;
  alert_id?: number;
  detail?: string;
}

const SELECT_EVENT = `
  SELECT e.id, e.incident_id, e.type, e.user_id, u.username, e.alert_id, e.detail, e.created_at
    FROM incident_events e LEFT JOIN users u ON u.id = e.user_id`;

/** Appends events in the given order (ids ascend in that order), all stamped `now`. */
export async function insertEvents(tx: Queryable, events: NewIncidentEvent[], now: Date): Promise<number[]> {
  if (events.length === 0) return [];
  const result = await tx.query<{ id: number }>(`${insertEventsStatement('$1', '$2')} RETURNING id`, [
    eventsParameter(events),
    now,
  ]);
  return result.rows.map((row) => row.id);
}

/**
 * The INSERT of insertEvents, for a statement that writes something else
 * beside it (a data-modifying WITH): `events` names the parameter holding
 * eventsParameter(…), `now` the time they are stamped with.
 */
export function insertEventsStatement(events: string, now: string): string {
  return `INSERT INTO incident_events (incident_id, type, user_id, alert_id, detail, created_at)
     SELECT incident_id, type, user_id, alert_id, detail, ${now}
       FROM ROWS FROM (jsonb_to_recordset(${events}::jsonb)
              AS (incident_id bigint, type text, user_id bigint, alert_id bigint, detail text))
            WITH ORDINALITY AS x(incident_id, type, user_id, alert_id, detail, ord)
      ORDER BY ord`;
}

/** The events as insertEventsStatement's parameter, in order. */
export function eventsParameter(events: NewIncidentEvent[]): string {
  return JSON.stringify(
    events.map((event) => ({
      incident_id: event.incident_id,
      type: event.type,
      user_id: event.user_id ?? null,
      alert_id: event.alert_id ?? null,
      detail: event.detail ?? null,
    })),
  );
}

export async function findEventById(db: Queryable, id: number): Promise<IncidentEventRow | undefined> {
  const result = await db.query<IncidentEventRow>(`${SELECT_EVENT} WHERE e.id = $1`, [id]);
  return result.rows[0];
}

/** An incident's timeline, oldest first. */
export async function listEventsOfIncident(db: Queryable, incidentId: number): Promise<IncidentEventRow[]> {
  const result = await db.query<IncidentEventRow>(
    `${SELECT_EVENT} WHERE e.incident_id = $1 ORDER BY e.created_at, e.id`,
    [incidentId],
  );
  return result.rows;
}

export async function deleteEvent(tx: Queryable, id: number): Promise<void> {
  await tx.query('DELETE FROM incident_events WHERE id = $1', [id]);
}
