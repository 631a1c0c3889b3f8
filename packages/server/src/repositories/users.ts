import type { Queryable } from '../db/database.ts';

export interface UserRow {
  id: number;
  username: string;
  email: string;
  role: 'admin' | 'member';
  kind: 'person' | 'service';
  ntfy_topic: string | null;
  has_password: boolean;
  created_at: Date;
}

const USER_COLUMNS = `id, username, email, role, kind, ntfy_topic, password_hash IS NOT NULL AS has_password, created_at`;

export interface NewUser {
  username: string;
  email: string;
  role: 'admin' | 'member';
  kind?: 'person' | 'service';
}

/** Inserts a user. A live user with the same username violates `users_username_live` (unique). */
export async function insertUser(db: Queryable, user: NewUser): Promise<UserRow> {
  const result = await db.query<UserRow>(
    `INSERT INTO users (username, email, role, kind) VALUES ($1, $2, $3, $4) RETURNING ${USER_COLUMNS}`,
    [user.username, user.email, user.role, user.kind ?? 'person'],
  );
  return result.rows[0]!;
}

/** A live (not deleted) user by id. */
export async function findUserById(db: Queryable, id: number): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 AND deleted_at IS NULL`,
    [id],
  );
  return result.rows[0];
}
