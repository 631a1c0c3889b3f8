import { createHmac } from 'node:crypto';
import type { Queryable } from '../db/database.ts';

/** A key generated once per installation by a migration (see 0200_sign_in.sql). */
export async function readInstanceSecret(db: Queryable, name: string): Promise<string> {
  const result = await db.query<{ secret: string }>(`SELECT secret FROM instance_secrets WHERE name = $1`, [
    name,
  ]);
  const secret = result.rows[0]?.secret;
  if (secret === undefined)
    throw new Error(`instance secret "${name}" is missing; are the migrations applied?`);
  return secret;
}

/**
 * An instance secret read once and kept (a migration made it; it never
 * changes), as `use` makes it into what its reader needs. A failed read is
 * not kept: the next call reads again.
 *
 * @example const signingKey = keptInstanceSecret(db, 'cookie_signing', (secret) => purposeKey(secret, 'terdut capability v1'));
 */
export function keptInstanceSecret(
  db: Queryable,
  name: string,
  use: (secret: string) => string = (secret) => secret,
): () => Promise<string> {
  let kept: Promise<string> | undefined;
  return () => {
    kept ??= readInstanceSecret(db, name)
      .then(use)
      .catch((error: unknown) => {
        kept = undefined;
        throw error;
      });
    return kept;
  };
}

/**
 * A key for one purpose, derived from an instance secret: a value signed
 * for one purpose (a capability, a device cookie) never passes for another
 * signed with the same secret (an OIDC flow cookie).
 */
export function purposeKey(secret: string, purpose: string): string {
  return createHmac('sha256', secret).update(purpose).digest('base64url');
}
