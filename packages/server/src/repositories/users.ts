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

/** Inserts a user. A live user with the same username in any case violates `users_username_live_ci` (unique). */
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

/** A live person (not a service account) by id. */
export async function findPersonById(db: Queryable, id: number): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 AND deleted_at IS NULL AND kind = 'person'`,
    [id],
  );
  return result.rows[0];
}

/**
 * A live person, locked against deletion until the transaction ends (`FOR
 * SHARE`): what is made for them meanwhile (an API key) cannot outlive a
 * deletion that waited, and a deletion that went first makes this undefined.
 */
export async function lockLivePerson(db: Queryable, id: number): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 AND deleted_at IS NULL AND kind = 'person' FOR SHARE`,
    [id],
  );
  return result.rows[0];
}

/** A live user of any kind by username, in any case (usernames are unique regardless of case). */
export async function findUserByUsername(db: Queryable, username: string): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users WHERE lower(username) = lower($1) AND deleted_at IS NULL`,
    [username],
  );
  return result.rows[0];
}

/** The most recently deleted person with this username, if any. */
export async function findDeletedPersonByUsername(
  db: Queryable,
  username: string,
): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users
      WHERE lower(username) = lower($1) AND kind = 'person' AND deleted_at IS NOT NULL
      ORDER BY deleted_at DESC, id DESC LIMIT 1`,
    [username],
  );
  return result.rows[0];
}

/** Live people (service-account users excluded), newest first. */
export async function listPeople(db: Queryable): Promise<UserRow[]> {
  const result = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users WHERE deleted_at IS NULL AND kind = 'person'
      ORDER BY created_at DESC, id DESC`,
  );
  return result.rows;
}

/**
 * Ids of the live person admins, with their rows locked until the transaction
 * ends, so two concurrent "remove an admin" changes cannot both see a second
 * admin and leave none.
 */
export async function lockLiveAdminIds(db: Queryable): Promise<number[]> {
  const result = await db.query<{ id: number }>(
    `SELECT id FROM users WHERE role = 'admin' AND kind = 'person' AND deleted_at IS NULL
      ORDER BY id FOR UPDATE`,
  );
  return result.rows.map((row) => row.id);
}

/** Soft-deletes a live user; false when there was none. */
export async function softDeleteUser(db: Queryable, id: number, at: Date): Promise<boolean> {
  const result = await db.query('UPDATE users SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL', [
    id,
    at,
  ]);
  return result.rowCount > 0;
}

/**
 * Brings a soft-deleted user back as an admin (recovery), optionally with a
 * new email. The old password is dropped: whoever knew it when the person
 * was deleted must not get in with it again; recovery hands out a fresh key.
 */
export async function restoreAsAdmin(db: Queryable, id: number, email: string | undefined): Promise<UserRow> {
  const result = await db.query<UserRow>(
    `UPDATE users SET deleted_at = NULL, role = 'admin', email = COALESCE($2, email), password_hash = NULL
      WHERE id = $1 RETURNING ${USER_COLUMNS}`,
    [id, email ?? null],
  );
  return result.rows[0]!;
}

/** Sets (or, with null, clears) a live user's ntfy topic. */
export async function setNtfyTopic(
  db: Queryable,
  id: number,
  topic: string | null,
): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `UPDATE users SET ntfy_topic = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING ${USER_COLUMNS}`,
    [id, topic],
  );
  return result.rows[0];
}

/** Sets a live user's role. */
export async function setRole(
  db: Queryable,
  id: number,
  role: 'admin' | 'member',
): Promise<UserRow | undefined> {
  const result = await db.query<UserRow>(
    `UPDATE users SET role = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING ${USER_COLUMNS}`,
    [id, role],
  );
  return result.rows[0];
}

/** True when any person row exists, deleted or not (a database in use before the bootstrap protocol). */
export async function anyPersonEverExisted(db: Queryable): Promise<boolean> {
  const result = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM users WHERE kind = 'person') AS found`,
  );
  return result.rows[0]?.found === true;
}
