import type { Queryable } from '../db/database.ts';

export interface HeartbeatRow {
  id: number;
  name: string;
  interval_ms: number;
  grace_ms: number;
  matchers: string[];
  last_seen_at: Date;
  created_at: Date;
}

const COLUMNS = 'id, name, interval_ms, grace_ms, matchers, last_seen_at, created_at';

export async function listHeartbeats(db: Queryable): Promise<HeartbeatRow[]> {
  return (await db.query<HeartbeatRow>(`SELECT ${COLUMNS} FROM heartbeats ORDER BY name`)).rows;
}

export async function findHeartbeat(db: Queryable, id: number): Promise<HeartbeatRow | undefined> {
  return (await db.query<HeartbeatRow>(`SELECT ${COLUMNS} FROM heartbeats WHERE id = $1`, [id])).rows[0];
}

export async function insertHeartbeat(
  tx: Queryable,
  heartbeat: Pick<HeartbeatRow, 'name' | 'interval_ms' | 'grace_ms' | 'matchers'>,
  now: Date,
): Promise<HeartbeatRow> {
  const result = await tx.query<HeartbeatRow>(
    `INSERT INTO heartbeats (name, interval_ms, grace_ms, matchers, last_seen_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${COLUMNS}`,
    [heartbeat.name, heartbeat.interval_ms, heartbeat.grace_ms, JSON.stringify(heartbeat.matchers), now],
  );
  return result.rows[0]!;
}

export async function deleteHeartbeat(tx: Queryable, id: number): Promise<HeartbeatRow | undefined> {
  return (await tx.query<HeartbeatRow>(`DELETE FROM heartbeats WHERE id = $1 RETURNING ${COLUMNS}`, [id]))
    .rows[0];
}

/** Marks heartbeats as seen now; returns those that exist. */
export async function refreshHeartbeats(
  tx: Queryable,
  ids: readonly number[],
  now: Date,
): Promise<HeartbeatRow[]> {
  if (ids.length === 0) return [];
  const result = await tx.query<HeartbeatRow>(
    `UPDATE heartbeats SET last_seen_at = GREATEST(last_seen_at, $2) WHERE id = ANY($1::bigint[]) RETURNING ${COLUMNS}`,
    [ids, now],
  );
  return result.rows;
}

/** Heartbeats not refreshed within interval + grace. */
export async function overdueHeartbeats(db: Queryable, now: Date): Promise<HeartbeatRow[]> {
  const result = await db.query<HeartbeatRow>(
    `SELECT ${COLUMNS} FROM heartbeats
      WHERE last_seen_at + (interval_ms + grace_ms) * interval '1 millisecond' < $1 ORDER BY id`,
    [now],
  );
  return result.rows;
}

/**
 * Whether the heartbeat's incident group has an incident (open or resolved)
 * that opened after `since` (its last sign of life): that silence has had
 * its incident.
 */
export async function hasIncidentSince(db: Queryable, groupKey: string, since: Date): Promise<boolean> {
  const result = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM incidents WHERE group_key = $1 AND triggered_at > $2) AS found`,
    [groupKey, since],
  );
  return result.rows[0]?.found === true;
}
