import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  ApiKeySchema,
  CreateKeyBody,
  IdParams,
  KeyIdParams,
  NewApiKeySchema,
  NoContent,
  errors,
} from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { ApiKeyService } from '../../services/api-keys.ts';
import { serializeApiKey, serializeNewApiKey } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** `/api/users/{id}/api-keys`: members manage their own keys, admins anyone's. */
export function apiKeyRoutes(apiKeys: ApiKeyService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['api keys'];

    app.get(
      '/api/users/:id/api-keys',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Keys of a person, newest first, without the keys themselves',
          params: IdParams,
          response: { 200: Type.Array(ApiKeySchema), ...errors(400, 403, 404) },
        },
      },
      async (request) => (await apiKeys.list(principalOf(request), request.params.id)).map(serializeApiKey),
    );

    app.post(
      '/api/users/:id/api-keys',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Create a key; the answer is the only time `key` is shown',
          params: IdParams,
          body: CreateKeyBody,
          response: { 201: NewApiKeySchema, ...errors(400, 403, 404) },
        },
      },
      async (request, reply) => {
        const created = await apiKeys.create(
          principalOf(request),
          request.params.id,
          request.body.name,
          request.ip,
        );
        return reply.status(201).send(serializeNewApiKey(created));
      },
    );

    app.delete(
      '/api/users/:id/api-keys/:key_id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Delete a key',
          params: KeyIdParams,
          response: { 204: NoContent, ...errors(400, 403, 404) },
        },
      },
      async (request, reply) => {
        await apiKeys.delete(principalOf(request), request.params.id, request.params.key_id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
