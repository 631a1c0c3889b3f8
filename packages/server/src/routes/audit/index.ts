import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AuditEntrySchema, AuditQuery, errors, type AuditEntry } from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { AuditService } from '../../services/audit.ts';
import type { AuditRow } from '../../repositories/audit.ts';
import { access } from '../../http/route-auth.ts';

/** Row → wire audit entry; absent actor, target and address are omitted. */
export function serializeAuditEntry(row: AuditRow): AuditEntry {
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
          querystring: AuditQuery,
          response: { 200: Type.Array(AuditEntrySchema), ...errors(400, 403) },
        },
      },
      async (request) => (await audit.list(principalOf(request), request.query)).map(serializeAuditEntry),
    );
  };
}
