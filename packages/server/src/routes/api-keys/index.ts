import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/authentication.ts';
import type { ApiKeyService } from '../../services/api-keys.ts';
import { ErrorSchema } from '../users/wire.ts';
import { ApiKeySchema, NewApiKeySchema, serializeApiKey, serializeNewApiKey } from './wire.ts';
import { access } from '../../http/route-auth.ts';
import { IdSchema } from '../../http/ids.ts';

/** `/api/users/{id}/api-keys`: members manage their own keys, admins anyone's. */
export function apiKeyRoutes(apiKeys: ApiKeyService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['api keys'];
    const userParams = Type.Object({ id: IdSchema });

    app.get(
      '/api/users/:id/api-keys',
      {
        config: { auth: access.signedIn },
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
        config: { auth: access.signedIn },
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
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Delete a key',
          params: Type.Object({ id: IdSchema, key_id: IdSchema }),
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
