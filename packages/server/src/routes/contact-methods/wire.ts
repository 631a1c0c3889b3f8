import type { ContactMethod } from '@terdut/contract';
import type { ContactMethodRow } from '../../repositories/contact-methods.ts';

// The schemas are in @terdut/contract (paging.ts); this maps rows to them.

export function serialiseContactMethod(
  row: ContactMethodRow,
  options: { withSecret?: boolean } = {},
): ContactMethod {
  return {
    id: row.id,
    user_id: row.user_id,
    kind: row.kind,
    name: row.name,
    target: row.target,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    ...(options.withSecret === true && row.secret !== null ? { secret: row.secret } : {}),
  };
}
