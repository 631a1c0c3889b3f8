import { Type } from '@fastify/type-provider-typebox';
import type { ApiKeyRow } from '../../repositories/api-keys.ts';

const apiKeyFields = {
  id: Type.Integer(),
  user_id: Type.Integer(),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'null until the key is first used; updated at most once a minute',
  }),
};

/** `APIKey` of api-contract.md as listed: never the key itself. */
export const ApiKeySchema = Type.Object(apiKeyFields);

/** `APIKey` in a create response: with `key`, shown this once. */
export const NewApiKeySchema = Type.Object({
  ...apiKeyFields,
  key: Type.String({ description: '64 hex characters; shown only in this response' }),
});

/** Row → wire `APIKey` as listed (no `key`). */
export function serializeApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at === null ? null : row.last_used_at.toISOString(),
  };
}

/** A just-created key → wire `APIKey` with `key` (create responses only). */
export function serializeNewApiKey(row: ApiKeyRow & { key: string }) {
  return { ...serializeApiKey(row), key: row.key };
}
