/**
 * Test support: a person with an API key, written straight to the database,
 * so a test or benchmark can start from "this user exists" without going
 * through bootstrap.
 */
import type { Queryable } from '../../packages/server/src/db/database.ts';
import { generateApiKey, hashApiKey } from '../../packages/server/src/auth/secrets.ts';
import { insertUser } from '../../packages/server/src/repositories/users.ts';
import { insertKey } from '../../packages/server/src/repositories/api-keys.ts';

export interface TestUser {
  id: number;
  username: string;
  /** The API key (64 hex), for `Authorization: Bearer`. */
  key: string;
}

/**
 * Inserts a person (`role` defaults to member, `email` to `<username>@example.com`) and one API key.
 *
 * @example const admin = await insertUserWithKey(db, { username: 'alice', role: 'admin' });
 */
export async function insertUserWithKey(
  db: Queryable,
  options: { username: string; role?: 'admin' | 'member'; email?: string; keyName?: string },
): Promise<TestUser> {
  const { username } = options;
  const user = await insertUser(db, {
    username,
    email: options.email ?? `${username}@example.com`,
    role: options.role ?? 'member',
  });
  const key = generateApiKey();
  await insertKey(db, user.id, options.keyName ?? `${username}-test`, hashApiKey(key));
  return { id: user.id, username, key };
}
