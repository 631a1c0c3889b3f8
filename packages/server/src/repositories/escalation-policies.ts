import type { Queryable } from '../db/database.ts';

/** Whom one step pages. */
/** `on_call` without `schedule_id`: the default schedule (policies from before schedules had ids). */
export type PolicyTarget =
  { type: 'on_call'; schedule_id?: number } | { type: 'user'; user_id: number } | { type: 'admins' };

export interface PolicyStep {
  /** Wait after the previous step (for the first: after the incident opened). */
  delay_ms: number;
  targets: PolicyTarget[];
}

/** What an escalation runs: also the snapshot stored with each escalation. */
export interface PolicyDefinition {
  name: string;
  steps: PolicyStep[];
  repeat: number;
  repeat_delay_ms: number;
  notify_on_resolve: boolean;
}

export interface EscalationPolicyRow extends PolicyDefinition {
  id: number;
  position: number;
  is_default: boolean;
  /** Alertmanager matcher strings, as given. */
  matchers: string[];
  created_at: Date;
  updated_at: Date;
}

export type EscalationPolicyFields = Omit<EscalationPolicyRow, 'id' | 'created_at' | 'updated_at'>;

const COLUMNS = `id, name, position, is_default, matchers, steps, repeat, repeat_delay_ms, notify_on_resolve,
  created_at, updated_at`;

/** Every policy in routing order (position, then id). */
export async function listPolicies(db: Queryable): Promise<EscalationPolicyRow[]> {
  const result = await db.query<EscalationPolicyRow>(
    `SELECT ${COLUMNS} FROM escalation_policies ORDER BY position, id`,
  );
  return result.rows;
}

export async function findPolicyById(db: Queryable, id: number): Promise<EscalationPolicyRow | undefined> {
  const result = await db.query<EscalationPolicyRow>(
    `SELECT ${COLUMNS} FROM escalation_policies WHERE id = $1`,
    [id],
  );
  return result.rows[0];
}

/** The number every change to the policies moves (migration 0960): what routing was read at. */
export async function readRoutingVersion(db: Queryable): Promise<number> {
  const result = await db.query<{ version: number }>('SELECT version FROM paging_routing');
  return Number(result.rows[0]!.version);
}

/** The position after the last policy. */
export async function nextPolicyPosition(db: Queryable): Promise<number> {
  const result = await db.query<{ next: number }>(
    `SELECT COALESCE(MAX(position), 0) + 1 AS next FROM escalation_policies`,
  );
  return result.rows[0]!.next;
}

/** Inserts a policy; a taken name or a second default violates a unique index. */
export async function insertPolicy(
  tx: Queryable,
  fields: EscalationPolicyFields,
  now: Date,
): Promise<EscalationPolicyRow> {
  const result = await tx.query<EscalationPolicyRow>(
    `INSERT INTO escalation_policies
       (name, position, is_default, matchers, steps, repeat, repeat_delay_ms, notify_on_resolve, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ${COLUMNS}`,
    [
      fields.name,
      fields.position,
      fields.is_default,
      JSON.stringify(fields.matchers),
      JSON.stringify(fields.steps),
      fields.repeat,
      fields.repeat_delay_ms,
      fields.notify_on_resolve,
      now,
    ],
  );
  return result.rows[0]!;
}

/** Replaces a policy's fields; undefined when there is no such policy. */
export async function updatePolicy(
  tx: Queryable,
  id: number,
  fields: EscalationPolicyFields,
  now: Date,
): Promise<EscalationPolicyRow | undefined> {
  const result = await tx.query<EscalationPolicyRow>(
    `UPDATE escalation_policies
        SET name = $2, position = $3, is_default = $4, matchers = $5, steps = $6, repeat = $7,
            repeat_delay_ms = $8, notify_on_resolve = $9, updated_at = $10
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [
      id,
      fields.name,
      fields.position,
      fields.is_default,
      JSON.stringify(fields.matchers),
      JSON.stringify(fields.steps),
      fields.repeat,
      fields.repeat_delay_ms,
      fields.notify_on_resolve,
      now,
    ],
  );
  return result.rows[0];
}

/** A step of a policy, numbered from 1, that pages whoever is on call in some schedule. */
export interface StepPagingSchedule {
  policy_id: number;
  policy_name: string;
  step: number;
}

/**
 * The steps that page schedule `scheduleId` (a target `{"type":"on_call","schedule_id":…}`),
 * in routing order. Targets are JSON without a foreign key, so this is what
 * stands for one when a schedule is deleted.
 */
export async function stepsPagingSchedule(db: Queryable, scheduleId: number): Promise<StepPagingSchedule[]> {
  const result = await db.query<StepPagingSchedule>(
    `SELECT p.id AS policy_id, p.name AS policy_name, s.number::int AS step
       FROM escalation_policies p
      CROSS JOIN LATERAL jsonb_array_elements(p.steps) WITH ORDINALITY AS s(step, number)
      WHERE s.step -> 'targets' @> jsonb_build_array(jsonb_build_object('type', 'on_call', 'schedule_id', $1::bigint))
      ORDER BY p.position, p.id, s.number`,
    [scheduleId],
  );
  return result.rows;
}

export async function deletePolicy(tx: Queryable, id: number): Promise<EscalationPolicyRow | undefined> {
  const result = await tx.query<EscalationPolicyRow>(
    `DELETE FROM escalation_policies WHERE id = $1 RETURNING ${COLUMNS}`,
    [id],
  );
  return result.rows[0];
}
