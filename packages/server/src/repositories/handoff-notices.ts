import type { Queryable } from '../db/database.ts';

export type HandoffNoticeKind = 'started' | 'ended';

export interface HandoffNoticeRow {
  id: number;
  schedule_id: number;
  handoff_at: Date;
  user_id: number;
  kind: HandoffNoticeKind;
  title: string;
  body: string;
  webhook_body: Record<string, unknown>;
  created_at: Date;
}

export type NewHandoffNotice = Omit<HandoffNoticeRow, 'id' | 'created_at'>;

/**
 * Claims one notice: the unique key (schedule, handoff instant, person,
 * kind) lets exactly one caller, on any replica, insert it. Returns the new
 * row's id, or undefined when it was claimed before.
 */
export async function claimHandoffNotice(
  tx: Queryable,
  notice: NewHandoffNotice,
  now: Date,
): Promise<number | undefined> {
  const result = await tx.query<{ id: number }>(
    `INSERT INTO handoff_notices (schedule_id, handoff_at, user_id, kind, title, body, webhook_body, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (schedule_id, handoff_at, user_id, kind) DO NOTHING
     RETURNING id`,
    [
      notice.schedule_id,
      notice.handoff_at,
      notice.user_id,
      notice.kind,
      notice.title,
      notice.body,
      JSON.stringify(notice.webhook_body),
      now,
    ],
  );
  return result.rows[0]?.id;
}

export async function findHandoffNotice(db: Queryable, id: number): Promise<HandoffNoticeRow | undefined> {
  const result = await db.query<HandoffNoticeRow>(
    `SELECT id, schedule_id, handoff_at, user_id, kind, title, body, webhook_body, created_at
       FROM handoff_notices WHERE id = $1`,
    [id],
  );
  return result.rows[0];
}
