import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  BootstrapBody,
  BootstrapStatusSchema,
  CredentialSchema,
  RecoverBody,
  errors,
  type Credential,
} from '@terdut/contract';
import type { AdminCredential, BootstrapService } from '../../services/bootstrap.ts';
import { serializeUser } from '../users/wire.ts';
import { serializeNewApiKey } from '../api-keys/wire.ts';
import { access } from '../../http/route-auth.ts';

function serializeCredential(credential: AdminCredential): Credential {
  return { user: serializeUser(credential.user), api_key: serializeNewApiKey(credential.apiKey) };
}

/**
 * `/api/bootstrap`: claim a fresh instance, or recover admin access, with the
 * bootstrap token (bootstrap-protocol.md). The POST routes declare the token
 * as their credential; the authentication hook checks it (and the rate limit)
 * before the body is validated, so a caller without it gets 401, never a hint
 * about the body.
 */
export function bootstrapRoutes(bootstrap: BootstrapService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['bootstrap'];
    const security = [{ bootstrapToken: [] }];
    const refusals = errors(400, 401, 429, 503);

    app.get(
      '/api/bootstrap',
      {
        config: { auth: access.public },
        schema: {
          tags,
          summary: 'Whether the instance has been bootstrapped',
          security: [],
          response: { 200: BootstrapStatusSchema },
        },
      },
      async () => bootstrap.status(),
    );

    app.post(
      '/api/bootstrap',
      {
        config: { auth: access.bootstrapToken('bootstrap') },
        schema: {
          tags,
          summary: 'Create the first admin and its API key (Authorization: Bearer <bootstrap token>)',
          description:
            'Exactly once: 403 {"error":"already bootstrapped"} afterwards. Rate limited per address.',
          security,
          body: BootstrapBody,
          response: { 201: CredentialSchema, ...refusals, ...errors(403) },
        },
      },
      async (request, reply) =>
        reply.status(201).send(serializeCredential(await bootstrap.bootstrap(request.body, request.ip))),
    );

    app.post(
      '/api/bootstrap/recover',
      {
        config: { auth: access.bootstrapToken('recover') },
        schema: {
          tags,
          summary:
            'Make sure a user exists as an admin and mint a fresh key (Authorization: Bearer <bootstrap token>)',
          description:
            'Any time after bootstrap (409 before): creates, restores or promotes the user. Rate limited per address.',
          security,
          body: RecoverBody,
          response: { 201: CredentialSchema, ...refusals, ...errors(409) },
        },
      },
      async (request, reply) =>
        reply.status(201).send(serializeCredential(await bootstrap.recover(request.body, request.ip))),
    );
  };
}
