import type { Queryable } from '../db/database.ts';

export interface ApiKeyRow {
  id: number;
  user_id: number;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** A key joined with its live owner, as authentication needs it. */
export interface ApiKeyOwnerRow {
  key_id: number;
  last_used_at: Date | null;
  user_id: number;
  username: string;
  role: 'admin' | 'member';
  kind: 'person' | 'service';
}

/** Finds the key with this hash whose owner is not deleted. */
export async function findKeyOwnerByHash(
  db: Queryable,
  keyHash: string,
): Promise<ApiKeyOwnerRow | undefined> {
  const result = await db.query<ApiKeyOwnerRow>(
    `SELECT k.id AS key_id, k.last_used_at, u.id AS user_id, u.username, u.role, u.kind
       FROM api_keys k JOIN users u ON u.id = k.user_id
      WHERE k.key_hash = $1 AND u.deleted_at IS NULL`,
    [keyHash],
  );
  return result.rows[0];
}

/** Records use of a key, but only when the stored time is older than `staleBefore` (not on every request). */
export async function touchKey(db: Queryable, keyId: number, now: Date, staleBefore: Date): Promise<void> {
  await db.query(
    `UPDATE api_keys SET last_used_at = $2
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`,
    [keyId, now, staleBefore],
  );
}

export async function insertKey(
  db: Queryable,
  userId: number,
  name: string,
  keyHash: string,
): Promise<ApiKeyRow> {
  const result = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (user_id, name, key_hash) VALUES ($1, $2, $3)
     RETURNING id, user_id, name, created_at, last_used_at`,
    [userId, name, keyHash],
  );
  return result.rows[0]!;
}

export async function listKeysOfUser(db: Queryable, userId: number): Promise<ApiKeyRow[]> {
  const result = await db.query<ApiKeyRow>(
    `SELECT id, user_id, name, created_at, last_used_at FROM api_keys
      WHERE user_id = $1 ORDER BY created_at DESC, id DESC`,
    [userId],
  );
  return result.rows;
}

/** Deletes one key of one user; false when there was no such key. */
export async function deleteKey(db: Queryable, userId: number, keyId: number): Promise<boolean> {
  const result = await db.query('DELETE FROM api_keys WHERE id = $1 AND user_id = $2', [keyId, userId]);
  return result.rowCount > 0;
}

/** Deletes every key of a user (the user is being deleted); returns how many. */
export async function deleteKeysOfUser(db: Queryable, userId: number): Promise<number> {
  const result = await db.query('DELETE FROM api_keys WHERE user_id = $1', [userId]);
  return result.rowCount;
}
