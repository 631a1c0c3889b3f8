import type { ApiKey, NewApiKey } from '@terdut/contract';
import type { ApiKeyRow } from '../../repositories/api-keys.ts';

/** Row → wire `APIKey` as listed (no `key`). */
export function serializeApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at === null ? null : row.last_used_at.toISOString(),
  };
}

/** A just-created key → wire `APIKey` with `key` (create responses only). */
export function serializeNewApiKey(row: ApiKeyRow & { key: string }): NewApiKey {
  return { ...serializeApiKey(row), key: row.key };
}
