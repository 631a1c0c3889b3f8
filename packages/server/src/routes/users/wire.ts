import type { User } from '@terdut/contract';
import type { UserRow } from '../../repositories/users.ts';

/** Row → wire `User`; `ntfy_topic` is omitted when there is none. */
export function serializeUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    created_at: row.created_at.toISOString(),
    ...(row.ntfy_topic !== null && row.ntfy_topic !== '' ? { ntfy_topic: row.ntfy_topic } : {}),
  };
}
