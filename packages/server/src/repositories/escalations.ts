import type { Queryable } from '../db/database.ts';
import type { PolicyDefinition } from './escalation-policies.ts';
import { eventsParameter, insertEventsStatement, type NewIncidentEvent } from './incident-events.ts';
import { selectIncidentWith, type IncidentRow } from './incidents.ts';

export type EscalationState = 'active' | 'paused' | 'stopped' | 'finished';

export interface EscalationRow {
  incident_id: number;
  policy_id: number | null;
  policy: PolicyDefinition;
  state: EscalationState;
  round: number;
  step: number;
  repeat: number;
  due_at: Date | null;
  updates: number;
  labels: Record<string, string>;
  updated_at: Date;
}

const COLUMNS =
  'incident_id, policy_id, policy, state, round, step, repeat, due_at, updates, labels, updated_at';

/** Starts paging for an incident, due at once; does nothing when it already has an escalation. */
export async function insertEscalation(
  tx: Queryable,
  escalation: {
    incident_id: number;
    policy_id: number | null;
    policy: PolicyDefinition;
    labels: Record<string, string>;
  },
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO escalations (incident_id, policy_id, policy, labels, state, due_at, updated_at)
     VALUES ($1, $2, $3, $4, 'active', $5, $5) ON CONFLICT (incident_id) DO NOTHING`,
    [
      escalation.incident_id,
      escalation.policy_id,
      JSON.stringify(escalation.policy),
      JSON.stringify(escalation.labels),
      now,
    ],
  );
}

/** The paging round the incident's escalation is in; undefined if it has none. */
export async function escalationRound(db: Queryable, incidentId: number): Promise<number | undefined> {
  const result = await db.query<{ round: number }>(`SELECT round FROM escalations WHERE incident_id = $1`, [
    incidentId,
  ]);
  return result.rows[0]?.round;
}

/** Whether the incident's escalation policy sends "resolved" notices (`notify_on_resolve`); false without one. */
export async function notifiesOnResolve(db: Queryable, incidentId: number): Promise<boolean> {
  const result = await db.query<{ policy: PolicyDefinition }>(
    `SELECT policy FROM escalations WHERE incident_id = $1`,
    [incidentId],
  );
  return Boolean(result.rows[0]?.policy.notify_on_resolve);
}

/** The incident's escalation, locked. Lock the incident first (the order every writer keeps). */
export async function lockEscalation(tx: Queryable, incidentId: number): Promise<EscalationRow | undefined> {
  const result = await tx.query<EscalationRow>(
    `SELECT ${COLUMNS} FROM escalations WHERE incident_id = $1 FOR UPDATE`,
    [incidentId],
  );
  return result.rows[0];
}

// The escalation's columns beside an incident's, prefixed so none collides.
const PREFIX = 'escalation_';
const PREFIXED_COLUMNS = COLUMNS.split(', ')
  .map((column) => `e.${column} AS ${PREFIX}${column}`)
  .join(', ');

/**
 * These incidents with their escalations, each pair locked, in one
 * statement, in incident order; an incident another transaction holds
 * (SKIP LOCKED: another pass has it) or without an escalation is left out.
 * The paging pass starts with this, for a batch of due escalations.
 *
 * The lock order every writer keeps, incident then escalation, holds within
 * the statement: PostgreSQL locks a row's relations in the order of the
 * locking clauses, whatever the join order, so each incident is locked (or
 * skipped) before its escalation is waited for
 * (escalation-lock-order.test.ts shows it). The rows are locked in the
 * order they come out (the sort is below the locking), so two passes take
 * the incidents they share in the same order.
 */
export async function lockIncidentsAndEscalationsUnlessHeld(
  tx: Queryable,
  incidentIds: readonly number[],
): Promise<{ incident: IncidentRow; escalation: EscalationRow }[]> {
  const result = await tx.query<Record<string, unknown>>(
    `${selectIncidentWith(PREFIXED_COLUMNS, 'JOIN escalations e ON e.incident_id = i.id')}
      WHERE i.id = ANY($1::bigint[])
      ORDER BY i.id
        FOR NO KEY UPDATE OF i SKIP LOCKED
        FOR UPDATE OF e`,
    [incidentIds],
  );
  return result.rows.map((row) => {
    const incident: Record<string, unknown> = {};
    const escalation: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row)) {
      if (column.startsWith(PREFIX)) escalation[column.slice(PREFIX.length)] = value;
      else incident[column] = value;
    }
    return {
      incident: incident as unknown as IncidentRow,
      escalation: escalation as unknown as EscalationRow,
    };
  });
}

export interface EscalationChanges {
  state?: EscalationState;
  round?: number;
  step?: number;
  repeat?: number;
  due_at?: Date | null;
  updates?: number;
}

const CHANGEABLE: readonly (keyof EscalationChanges)[] = [
  'state',
  'round',
  'step',
  'repeat',
  'due_at',
  'updates',
];

export async function updateEscalation(
  tx: Queryable,
  incidentId: number,
  changes: EscalationChanges,
  now: Date,
): Promise<void> {
  const update = updateStatement(incidentId, changes, now);
  await tx.query(update.text, update.values);
}

/** Where an escalation stands: what a paging pass moves (it never changes `updates`). */
export type EscalationPosition = Pick<EscalationRow, 'state' | 'round' | 'step' | 'repeat' | 'due_at'>;

/** Where a paging pass moves one escalation it holds. */
export type EscalationMove = EscalationPosition & Pick<EscalationRow, 'incident_id'>;

/**
 * A paging pass's escalations moved and their timelines' new events, in one
 * statement: the end of a batch of paging steps, one round trip for all of
 * them. The caller holds each escalation's lock, so the position it read is
 * the one it moves from.
 */
export async function moveEscalationsWithEvents(
  tx: Queryable,
  moves: readonly EscalationMove[],
  events: NewIncidentEvent[],
  now: Date,
): Promise<void> {
  if (moves.length === 0 && events.length === 0) return;
  // A data-modifying WITH runs whether or not the INSERT reads it.
  await tx.query(
    `WITH moved AS (
       UPDATE escalations e
          SET updated_at = $1, state = m.state, round = m.round, step = m.step, repeat = m.repeat,
              due_at = m.due_at
         FROM jsonb_to_recordset($2::jsonb)
              AS m(incident_id bigint, state text, round integer, step integer, repeat integer,
                   due_at timestamptz)
        WHERE e.incident_id = m.incident_id
          -- Found by key: the planner takes the record set for 100 rows and
          -- would hash-join it with a scan of every escalation ever started.
          AND e.incident_id = ANY($4::bigint[])
     ) ${insertEventsStatement('$3', '$1')}`,
    [
      now,
      JSON.stringify(
        moves.map((move) => ({
          incident_id: move.incident_id,
          state: move.state,
          round: move.round,
          step: move.step,
          repeat: move.repeat,
          due_at: move.due_at?.toISOString() ?? null,
        })),
      ),
      eventsParameter(events),
      moves.map((move) => move.incident_id),
    ],
  );
}

/** The UPDATE of updateEscalation: `$1` the incident, `$2` now, then the changed columns. */
function updateStatement(
  incidentId: number,
  changes: EscalationChanges,
  now: Date,
): { text: string; values: unknown[] } {
  const columns = CHANGEABLE.filter((column) => column in changes);
  const assignments = columns.map((column, index) => `${column} = $${index + 3}`);
  return {
    text: `UPDATE escalations SET ${['updated_at = $2', ...assignments].join(', ')} WHERE incident_id = $1`,
    values: [incidentId, now, ...columns.map((column) => changes[column])],
  };
}

/**
 * Incidents whose escalation is due, oldest due first, leaving out `skip`
 * (already looked at in this pass); unlocked: the worker locks each in turn.
 */
export async function dueEscalations(
  db: Queryable,
  now: Date,
  skip: readonly number[],
  limit: number,
): Promise<number[]> {
  const result = await db.query<{ incident_id: number }>(
    `SELECT incident_id FROM escalations
      WHERE due_at <= $1 AND NOT (incident_id = ANY($2::bigint[]))
      ORDER BY due_at LIMIT $3`,
    [now, skip, limit],
  );
  return result.rows.map((row) => row.incident_id);
}

/** Escalations waiting for their next step (due later than `now`), with the labels windows match. */
export async function waitingEscalations(
  db: Queryable,
  now: Date,
): Promise<{ incident_id: number; labels: Record<string, string> }[]> {
  const result = await db.query<{ incident_id: number; labels: Record<string, string> }>(
    `SELECT incident_id, labels FROM escalations WHERE state = 'active' AND due_at > $1`,
    [now],
  );
  return result.rows;
}

/** Makes these escalations due now, so the next pass looks at them (a window holds them). */
export async function makeDueNow(db: Queryable, incidentIds: readonly number[], now: Date): Promise<void> {
  if (incidentIds.length === 0) return;
  await db.query(
    `UPDATE escalations SET due_at = $1 WHERE incident_id = ANY($2::bigint[]) AND state = 'active' AND due_at > $1`,
    [now, incidentIds],
  );
}
