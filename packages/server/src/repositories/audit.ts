import type { Queryable } from '../db/database.ts';

export interface AuditRow {
  id: number;
  created_at: Date;
  actor_user_id: number | null;
  actor: string | null;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
  client_address: string | null;
}

export interface NewAuditRow {
  actorUserId: number | null;
  actor: string | null;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
  clientAddress: string | null;
}

export async function insertAuditRow(db: Queryable, row: NewAuditRow): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (actor_user_id, actor, action, target, detail, client_address)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
    [row.actorUserId, row.actor, row.action, row.target, JSON.stringify(row.detail), row.clientAddress],
  );
}

/**
 * Adds one to the `count` of this minute's row with the same action, address
 * and detail, if there is one; answers whether there was. Repeated events of
 * one kind from one address (a flood of refused bootstrap attempts) then cost
 * one row per address per minute, not one per attempt.
 */
export async function countIntoThisMinutesRow(db: Queryable, row: NewAuditRow): Promise<boolean> {
  const result = await db.query(
    `UPDATE audit_log
        SET detail = jsonb_set(detail, '{count}', to_jsonb(COALESCE((detail->>'count')::int, 1) + 1))
      WHERE id = (SELECT id FROM audit_log
                   WHERE created_at >= date_trunc('minute', now())
                     AND action = $1 AND client_address IS NOT DISTINCT FROM $2 AND detail @> $3::jsonb
                   ORDER BY id DESC LIMIT 1)`,
    [row.action, row.clientAddress, JSON.stringify(row.detail)],
  );
  return result.rowCount > 0;
}

/**
 * The newest `limit` entries, or with `before` those that come after entry
 * `before` in that order (keyset, so a page does not shift as entries are
 * added); undefined when no entry has the id `before`.
 */
export async function listAuditRows(
  db: Queryable,
  limit: number,
  before?: number,
): Promise<AuditRow[] | undefined> {
  if (before === undefined) {
    const result = await db.query<AuditRow>(
      `SELECT id, created_at, actor_user_id, actor, action, target, detail, client_address
         FROM audit_log ORDER BY created_at DESC, id DESC LIMIT $1`,
      [limit],
    );
    return result.rows;
  }
  // The anchor's time is read in SQL: a JavaScript Date would cut its microseconds.
  const result = await db.query<AuditRow>(
    `SELECT id, created_at, actor_user_id, actor, action, target, detail, client_address
       FROM audit_log
      WHERE (created_at, id) < (SELECT created_at, id FROM audit_log WHERE id = $2)
      ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit, before],
  );
  if (result.rows.length > 0) return result.rows;
  const anchor = await db.query(`SELECT 1 FROM audit_log WHERE id = $1`, [before]);
  return anchor.rows.length > 0 ? [] : undefined;
}
