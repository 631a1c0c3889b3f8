import type { ServiceAccount } from '@terdut/contract';
import type { ServiceAccountRow } from '../../repositories/service-accounts.ts';

/** Row → wire `ServiceAccount`. */
export function serializeServiceAccount(row: ServiceAccountRow): ServiceAccount {
  return { id: row.id, name: row.name, scope: row.scope, created_at: row.created_at.toISOString() };
}
