import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  ApiKeySchema,
  CreateKeyBody,
  CreateServiceAccountBody,
  IdParams,
  KeyIdParams,
  NewApiKeySchema,
  NewServiceAccountSchema,
  NoContent,
  ServiceAccountQuery,
  ServiceAccountSchema,
  errors,
} from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { ServiceAccountService } from '../../services/service-accounts.ts';
import { serializeApiKey, serializeNewApiKey } from '../api-keys/wire.ts';
import { serializeServiceAccount } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** `/api/service-accounts`: credentials for programs such as the operator (admins only). */
export function serviceAccountRoutes(accounts: ServiceAccountService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['service accounts'];
    const adminErrors = errors(400, 403, 404);

    app.post(
      '/api/service-accounts',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Create a service account with a first key',
          description: '409 when the name exists (look it up by name and mint a key instead).',
          body: CreateServiceAccountBody,
          response: { 201: NewServiceAccountSchema, ...errors(400, 403, 409) },
        },
      },
      async (request, reply) => {
        const { account, key } = await accounts.create(principalOf(request), request.body, request.ip);
        return reply
          .status(201)
          .send({ service_account: serializeServiceAccount(account), key: serializeNewApiKey(key) });
      },
    );

    app.get(
      '/api/service-accounts',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Service accounts, newest first; `name` filters to that exact name',
          querystring: ServiceAccountQuery,
          response: { 200: Type.Array(ServiceAccountSchema), ...errors(403) },
        },
      },
      async (request) =>
        (await accounts.list(principalOf(request), request.query)).map(serializeServiceAccount),
    );

    app.get(
      '/api/service-accounts/:id/keys',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Keys of a service account, newest first, without the keys themselves',
          description: 'Lets an adopter find keys nobody recorded (a crash after minting) and revoke them.',
          params: IdParams,
          response: { 200: Type.Array(ApiKeySchema), ...adminErrors },
        },
      },
      async (request) =>
        (await accounts.listKeys(principalOf(request), request.params.id)).map(serializeApiKey),
    );

    app.post(
      '/api/service-accounts/:id/keys',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Mint another key; the answer is the only time `key` is shown',
          params: IdParams,
          body: CreateKeyBody,
          response: { 201: NewApiKeySchema, ...adminErrors },
        },
      },
      async (request, reply) => {
        const key = await accounts.createKey(
          principalOf(request),
          request.params.id,
          request.body.name,
          request.ip,
        );
        return reply.status(201).send(serializeNewApiKey(key));
      },
    );

    app.delete(
      '/api/service-accounts/:id/keys/:key_id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Revoke one key of a service account',
          params: KeyIdParams,
          response: { 204: NoContent, ...adminErrors },
        },
      },
      async (request, reply) => {
        await accounts.deleteKey(principalOf(request), request.params.id, request.params.key_id, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.delete(
      '/api/service-accounts/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete a service account and all its keys',
          params: IdParams,
          response: { 204: NoContent, ...adminErrors },
        },
      },
      async (request, reply) => {
        await accounts.delete(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
