import { Type } from '@fastify/type-provider-typebox';
import type { UserRow } from '../../repositories/users.ts';

/** `User` of api-contract.md, plus `role`. `ntfy_topic` is omitted when there is none. */
export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    username: Type.String(),
    email: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
    created_at: Type.String({ format: 'date-time' }),
    ntfy_topic: Type.Optional(Type.String()),
  },
  { description: 'A person (or, on /api/me, a service account)' },
);

export const ErrorSchema = Type.Object({ error: Type.String() });

/** Row → wire `User`. */
export function serializeUser(row: UserRow) {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    created_at: row.created_at.toISOString(),
    ...(row.ntfy_topic !== null && row.ntfy_topic !== '' ? { ntfy_topic: row.ntfy_topic } : {}),
  };
}
