import type { Queryable } from '../db/database.ts';

/** What password sign-in needs to know about a live person. */
export interface PasswordHolderRow {
  id: number;
  username: string;
  role: 'admin' | 'member';
  password_hash: string | null;
}

/** A live person (service accounts never sign in with a password) by username. */
export async function findPasswordHolderByUsername(
  db: Queryable,
  username: string,
): Promise<PasswordHolderRow | undefined> {
  const result = await db.query<PasswordHolderRow>(
    `SELECT id, username, role, password_hash FROM users
      WHERE lower(username) = lower($1) AND deleted_at IS NULL AND kind = 'person'`,
    [username],
  );
  return result.rows[0];
}

/** A live person by id. */
export async function findPasswordHolderById(
  db: Queryable,
  id: number,
): Promise<PasswordHolderRow | undefined> {
  const result = await db.query<PasswordHolderRow>(
    `SELECT id, username, role, password_hash FROM users
      WHERE id = $1 AND deleted_at IS NULL AND kind = 'person'`,
    [id],
  );
  return result.rows[0];
}

export async function setPasswordHash(db: Queryable, id: number, hash: string): Promise<void> {
  await db.query(`UPDATE users SET password_hash = $2 WHERE id = $1`, [id, hash]);
}
