import type { Queryable } from '../db/database.ts';

/** A live session joined with its live owner, as authentication needs it. */
export interface SessionOwnerRow {
  session_id: string;
  last_seen_at: Date;
  user_id: number;
  username: string;
  role: 'admin' | 'member';
  kind: 'person' | 'service';
}

export async function insertSession(
  db: Queryable,
  session: { id: string; userId: number; method: 'password' | 'oidc'; now: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO sessions (id, user_id, method, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)`,
    [session.id, session.userId, session.method, session.now],
  );
}

/**
 * The session with this id if it is not revoked, was seen after `idleSince`,
 * started after `startedSince`, and its user is not deleted (so deleting a
 * user ends their sessions at once).
 */
export async function findLiveSession(
  db: Queryable,
  id: string,
  bounds: { idleSince: Date; startedSince: Date },
): Promise<SessionOwnerRow | undefined> {
  const result = await db.query<SessionOwnerRow>(
    `SELECT s.id AS session_id, s.last_seen_at, u.id AS user_id, u.username, u.role, u.kind
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id = $1 AND s.revoked_at IS NULL AND s.last_seen_at > $2 AND s.created_at > $3
        AND u.deleted_at IS NULL`,
    [id, bounds.idleSince, bounds.startedSince],
  );
  return result.rows[0];
}

/** Moves the sliding expiry forward, but only when the stored time is older than `staleBefore`. */
export async function touchSession(db: Queryable, id: string, now: Date, staleBefore: Date): Promise<void> {
  await db.query(`UPDATE sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $3`, [
    id,
    now,
    staleBefore,
  ]);
}

export async function revokeSession(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(`UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [id, now]);
}

/** Revokes every live session of a user except `keepId` (the one making the change, if any). */
export async function revokeSessionsOfUser(
  db: Queryable,
  userId: number,
  now: Date,
  keepId?: string,
): Promise<number> {
  const result = await db.query(
    `UPDATE sessions SET revoked_at = $2
      WHERE user_id = $1 AND revoked_at IS NULL AND id IS DISTINCT FROM $3`,
    [userId, now, keepId ?? null],
  );
  return result.rowCount;
}

/**
 * Deletes one user's sessions that ended (revoked, or idle since) before
 * `before`; they can never come back. Run at each sign-in, so the table holds
 * roughly the live sessions and not every sign-in ever made.
 */
export async function deleteEndedSessionsOfUser(
  db: Queryable,
  userId: number,
  before: Date,
): Promise<number> {
  const result = await db.query(
    `DELETE FROM sessions
      WHERE user_id = $1 AND (revoked_at < $2 OR (revoked_at IS NULL AND last_seen_at < $2))`,
    [userId, before],
  );
  return result.rowCount;
}
