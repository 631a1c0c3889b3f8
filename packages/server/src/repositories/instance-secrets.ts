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
