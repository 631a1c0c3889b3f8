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

/** The newest `limit` entries, newest first. */
export async function listAuditRows(db: Queryable, limit: number): Promise<AuditRow[]> {
  const result = await db.query<AuditRow>(
    `SELECT id, created_at, actor_user_id, actor, action, target, detail, client_address
       FROM audit_log ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit],
  );
  return result.rows;
}
