import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/authentication.ts';
import type { ApiKeyService } from '../../services/api-keys.ts';
import { ErrorSchema } from '../users/wire.ts';
import { ApiKeySchema, NewApiKeySchema, serializeApiKey, serializeNewApiKey } from './wire.ts';

/** `/api/users/{id}/api-keys`: members manage their own keys, admins anyone's. */
export function apiKeyRoutes(apiKeys: ApiKeyService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['api keys'];
    const userParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });

    app.get(
      '/api/users/:id/api-keys',
      {
        schema: {
          tags,
          summary: 'Keys of a person, newest first, without the keys themselves',
          params: userParams,
          response: { 200: Type.Array(ApiKeySchema), 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) => (await apiKeys.list(principalOf(request), request.params.id)).map(serializeApiKey),
    );

    app.post(
      '/api/users/:id/api-keys',
      {
        schema: {
          tags,
          summary: 'Create a key; the answer is the only time `key` is shown',
          params: userParams,
          body: Type.Object({ name: Type.String() }),
          response: { 201: NewApiKeySchema, 400: ErrorSchema, 403: ErrorSchema, 404: ErrorSchema },
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
        schema: {
          tags,
          summary: 'Delete a key',
          params: Type.Object({ id: Type.Integer({ minimum: 1 }), key_id: Type.Integer({ minimum: 1 }) }),
          response: { 204: Type.Null(), 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await apiKeys.delete(principalOf(request), request.params.id, request.params.key_id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
