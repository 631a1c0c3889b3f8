import type { Queryable } from '../db/database.ts';

/** An OIDC identity with the user it is linked to (who may have been deleted). */
export interface LinkedIdentityRow {
  user_id: number;
  username: string;
  email: string;
  role: 'admin' | 'member';
  deleted: boolean;
}

// Any constant, the same in every replica. OIDC provisioning runs under it so
// two first sign-ins at once cannot link one identity twice or take one
// username twice. First sign-ins are rare; the wait is milliseconds.
const OIDC_PROVISIONING_LOCK_KEY = 7_362_200;

/** Serialises OIDC user provisioning across connections and replicas until the transaction ends. */
export async function lockOidcProvisioning(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [OIDC_PROVISIONING_LOCK_KEY]);
}

export async function findLinkedUser(
  db: Queryable,
  issuer: string,
  subject: string,
): Promise<LinkedIdentityRow | undefined> {
  const result = await db.query<LinkedIdentityRow>(
    `SELECT u.id AS user_id, u.username, u.email, u.role, u.deleted_at IS NOT NULL AS deleted
       FROM user_identities i JOIN users u ON u.id = i.user_id
      WHERE i.issuer = $1 AND i.subject = $2`,
    [issuer, subject],
  );
  return result.rows[0];
}

export async function linkIdentity(
  db: Queryable,
  identity: { issuer: string; subject: string; userId: number; now: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO user_identities (issuer, subject, user_id, created_at, last_sign_in_at) VALUES ($1, $2, $3, $4, $4)`,
    [identity.issuer, identity.subject, identity.userId, identity.now],
  );
}

export async function touchIdentity(
  db: Queryable,
  issuer: string,
  subject: string,
  now: Date,
): Promise<void> {
  await db.query(`UPDATE user_identities SET last_sign_in_at = $3 WHERE issuer = $1 AND subject = $2`, [
    issuer,
    subject,
    now,
  ]);
}

/** Sets the email the provider reports for a user. */
export async function setUserEmail(db: Queryable, userId: number, email: string): Promise<void> {
  await db.query(`UPDATE users SET email = $2 WHERE id = $1`, [userId, email]);
}
