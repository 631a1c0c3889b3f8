import { Type } from '@fastify/type-provider-typebox';
import type { ServiceAccountRow } from '../../repositories/service-accounts.ts';

/** `ServiceAccount` of api-contract.md. */
export const ServiceAccountSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  scope: Type.Literal('instance'),
  created_at: Type.String({ format: 'date-time' }),
});

/** Row → wire `ServiceAccount`. */
export function serializeServiceAccount(row: ServiceAccountRow) {
  return { id: row.id, name: row.name, scope: row.scope, created_at: row.created_at.toISOString() };
}
