import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/authentication.ts';
import { DEFAULT_AUDIT_LIMIT, type AuditService } from '../../services/audit.ts';
import type { AuditRow } from '../../repositories/audit.ts';
import { ErrorSchema } from '../users/wire.ts';
import { access } from '../../http/route-auth.ts';

/** One audit log entry; absent actor, target and address are omitted. */
export const AuditEntrySchema = Type.Object({
  id: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  action: Type.String({ description: 'e.g. bootstrap, bootstrap.recover, user.created, api_key.deleted' }),
  actor: Type.Optional(Type.String({ description: 'username, or a non-user actor such as "cli"' })),
  actor_user_id: Type.Optional(Type.Integer()),
  target: Type.Optional(Type.String({ description: 'e.g. user:7, api_key:12' })),
  detail: Type.Record(Type.String(), Type.Unknown()),
  client_address: Type.Optional(Type.String()),
});

/** Row → wire audit entry. */
export function serializeAuditEntry(row: AuditRow) {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    action: row.action,
    ...(row.actor !== null ? { actor: row.actor } : {}),
    ...(row.actor_user_id !== null ? { actor_user_id: row.actor_user_id } : {}),
    ...(row.target !== null ? { target: row.target } : {}),
    detail: row.detail,
    ...(row.client_address !== null ? { client_address: row.client_address } : {}),
  };
}

/** `GET /api/audit`: security-relevant events, newest first (admins). */
export function auditRoutes(audit: AuditService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/api/audit',
      {
        config: { auth: access.admin },
        schema: {
          tags: ['audit'],
          summary: 'Audit log, newest first (admins)',
          querystring: Type.Object({
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: DEFAULT_AUDIT_LIMIT })),
          }),
          response: { 200: Type.Array(AuditEntrySchema), 400: ErrorSchema, 403: ErrorSchema },
        },
      },
      async (request) => (await audit.list(principalOf(request), request.query)).map(serializeAuditEntry),
    );
  };
}
