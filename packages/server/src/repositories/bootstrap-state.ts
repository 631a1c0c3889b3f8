import type { Queryable } from '../db/database.ts';

// Any constant, the same in every replica. Held for the rest of the
// transaction, so concurrent bootstrap and recover calls run one after the
// other and each sees what the previous one committed.
const BOOTSTRAP_LOCK_KEY = 7_362_012;

/** Serialises bootstrap-state changes across connections and replicas until the transaction ends. */
export async function lockBootstrapState(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
}

/** True when the single bootstrap record exists. */
export async function bootstrapRecordExists(db: Queryable): Promise<boolean> {
  const result = await db.query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM bootstrap_state) AS found');
  return result.rows[0]?.found === true;
}

/** Writes the single bootstrap record (violates the primary key if one exists). */
export async function insertBootstrapRecord(db: Queryable, userId: number): Promise<void> {
  await db.query('INSERT INTO bootstrap_state (user_id) VALUES ($1)', [userId]);
}
