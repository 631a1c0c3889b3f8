import type { Queryable } from '../db/database.ts';

export type ContactMethodKind = 'ntfy' | 'webhook' | 'email';

export interface ContactMethodRow {
  id: number;
  user_id: number;
  kind: ContactMethodKind;
  name: string;
  /** ntfy: the topic; webhook: the URL; email: the address. */
  target: string;
  /** webhook: the HMAC key. Never sent to clients after creation. */
  secret: string | null;
  enabled: boolean;
  created_at: Date;
}

const COLUMNS = 'id, user_id, kind, name, target, secret, enabled, created_at';

/** A person's methods, oldest first. */
export async function listContactMethods(db: Queryable, userId: number): Promise<ContactMethodRow[]> {
  const result = await db.query<ContactMethodRow>(
    `SELECT ${COLUMNS} FROM contact_methods WHERE user_id = $1 ORDER BY id`,
    [userId],
  );
  return result.rows;
}

export async function findContactMethod(
  db: Queryable,
  userId: number,
  id: number,
): Promise<ContactMethodRow | undefined> {
  const result = await db.query<ContactMethodRow>(
    `SELECT ${COLUMNS} FROM contact_methods WHERE id = $1 AND user_id = $2`,
    [id, userId],
  );
  return result.rows[0];
}

export async function findContactMethodById(
  db: Queryable,
  id: number,
): Promise<ContactMethodRow | undefined> {
  const result = await db.query<ContactMethodRow>(`SELECT ${COLUMNS} FROM contact_methods WHERE id = $1`, [
    id,
  ]);
  return result.rows[0];
}

export interface NewContactMethod {
  user_id: number;
  kind: ContactMethodKind;
  name: string;
  target: string;
  secret: string | null;
  enabled: boolean;
}

export async function insertContactMethod(
  db: Queryable,
  method: NewContactMethod,
  now: Date,
): Promise<ContactMethodRow> {
  const result = await db.query<ContactMethodRow>(
    `INSERT INTO contact_methods (user_id, kind, name, target, secret, enabled, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [method.user_id, method.kind, method.name, method.target, method.secret, method.enabled, now],
  );
  return result.rows[0]!;
}

/** Switches a method on or off; undefined when the person has no such method. */
export async function setContactMethodEnabled(
  db: Queryable,
  userId: number,
  id: number,
  enabled: boolean,
): Promise<ContactMethodRow | undefined> {
  const result = await db.query<ContactMethodRow>(
    `UPDATE contact_methods SET enabled = $3 WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
    [id, userId, enabled],
  );
  return result.rows[0];
}

export async function deleteContactMethod(db: Queryable, userId: number, id: number): Promise<boolean> {
  const result = await db.query(`DELETE FROM contact_methods WHERE id = $1 AND user_id = $2`, [id, userId]);
  return result.rowCount > 0;
}
