import type { Queryable } from '../db/database.ts';

/** A person as paging needs them: who, and the contract's ntfy topic. */
export interface PageablePerson {
  id: number;
  username: string;
  ntfy_topic: string | null;
}

/** Live people among `ids` (deleted users and service accounts are left out), in id order. */
export async function findPageablePeople(db: Queryable, ids: readonly number[]): Promise<PageablePerson[]> {
  if (ids.length === 0) return [];
  const result = await db.query<PageablePerson>(
    `SELECT id, username, ntfy_topic FROM users
      WHERE id = ANY($1::bigint[]) AND deleted_at IS NULL AND kind = 'person' ORDER BY id`,
    [ids],
  );
  return result.rows;
}

/** Ids of every live admin person. */
export async function listAdminIds(db: Queryable): Promise<number[]> {
  const result = await db.query<{ id: number }>(
    `SELECT id FROM users WHERE role = 'admin' AND kind = 'person' AND deleted_at IS NULL ORDER BY id`,
  );
  return result.rows.map((row) => row.id);
}
