import type { Queryable } from '../db/database.ts';

export interface MaintenanceWindowRow {
  id: number;
  starts_at: Date;
  ends_at: Date;
  /** Alertmanager matcher strings; all must match. */
  matchers: string[];
  reason: string;
  created_by: number | null;
  created_at: Date;
}

const COLUMNS = 'id, starts_at, ends_at, matchers, reason, created_by, created_at';

/** Windows that have not ended, soonest first. */
export async function listCurrentAndFutureWindows(db: Queryable, now: Date): Promise<MaintenanceWindowRow[]> {
  const result = await db.query<MaintenanceWindowRow>(
    `SELECT ${COLUMNS} FROM maintenance_windows WHERE ends_at > $1 ORDER BY starts_at, id`,
    [now],
  );
  return result.rows;
}

/** Windows in force at `now`. */
export async function activeWindows(db: Queryable, now: Date): Promise<MaintenanceWindowRow[]> {
  const result = await db.query<MaintenanceWindowRow>(
    `SELECT ${COLUMNS} FROM maintenance_windows WHERE starts_at <= $1 AND ends_at > $1 ORDER BY ends_at, id`,
    [now],
  );
  return result.rows;
}

export async function insertWindow(
  tx: Queryable,
  window: Omit<MaintenanceWindowRow, 'id' | 'created_at'>,
  now: Date,
): Promise<MaintenanceWindowRow> {
  const result = await tx.query<MaintenanceWindowRow>(
    `INSERT INTO maintenance_windows (starts_at, ends_at, matchers, reason, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
    [
      window.starts_at,
      window.ends_at,
      JSON.stringify(window.matchers),
      window.reason,
      window.created_by,
      now,
    ],
  );
  return result.rows[0]!;
}

export async function deleteWindow(tx: Queryable, id: number): Promise<MaintenanceWindowRow | undefined> {
  const result = await tx.query<MaintenanceWindowRow>(
    `DELETE FROM maintenance_windows WHERE id = $1 RETURNING ${COLUMNS}`,
    [id],
  );
  return result.rows[0];
}
