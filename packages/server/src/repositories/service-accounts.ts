import type { Queryable } from '../db/database.ts';

export interface ServiceAccountRow {
  id: number;
  user_id: number;
  name: string;
  scope: 'instance';
  created_at: Date;
}

const COLUMNS = 'id, user_id, name, scope, created_at';

/** Inserts a service account row; a taken name violates the unique constraint on `name`. */
export async function insertServiceAccount(
  db: Queryable,
  account: { userId: number; name: string; scope: 'instance' },
): Promise<ServiceAccountRow> {
  const result = await db.query<ServiceAccountRow>(
    `INSERT INTO service_accounts (user_id, name, scope) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [account.userId, account.name, account.scope],
  );
  return result.rows[0]!;
}

export async function findServiceAccountById(
  db: Queryable,
  id: number,
): Promise<ServiceAccountRow | undefined> {
  const result = await db.query<ServiceAccountRow>(`SELECT ${COLUMNS} FROM service_accounts WHERE id = $1`, [
    id,
  ]);
  return result.rows[0];
}

export async function findServiceAccountByName(
  db: Queryable,
  name: string,
): Promise<ServiceAccountRow | undefined> {
  const result = await db.query<ServiceAccountRow>(
    `SELECT ${COLUMNS} FROM service_accounts WHERE lower(name) = lower($1)`,
    [name],
  );
  return result.rows[0];
}

/**
 * All service accounts, or the one named `name`, newest first. Names are
 * matched as usernames are, whatever the case: `OPS` clashes with `ops`
 * (409), and the lookup the 409 points to finds it.
 */
export async function listServiceAccounts(db: Queryable, name?: string): Promise<ServiceAccountRow[]> {
  const result = await db.query<ServiceAccountRow>(
    `SELECT ${COLUMNS} FROM service_accounts WHERE ($1::text IS NULL OR lower(name) = lower($1))
      ORDER BY created_at DESC, id DESC`,
    [name ?? null],
  );
  return result.rows;
}

/** Removes a service account row; its user is soft-deleted separately. False when there was none. */
export async function deleteServiceAccount(db: Queryable, id: number): Promise<boolean> {
  const result = await db.query('DELETE FROM service_accounts WHERE id = $1', [id]);
  return result.rowCount > 0;
}
