import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ErrorSchema, HeartbeatInputSchema, HeartbeatSchema, IdParams, NoContent } from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { HeartbeatService } from '../../services/paging/heartbeats.ts';
import { serialiseHeartbeat } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** `/api/heartbeats`: dead man's switches. Everyone reads and pings (cron jobs' keys); admins change (audited). */
export function heartbeatRoutes(heartbeats: HeartbeatService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['paging'];

    app.get(
      '/api/heartbeats',
      {
        config: { auth: access.signedIn },
        schema: { tags, summary: 'Heartbeats by name', response: { 200: Type.Array(HeartbeatSchema) } },
      },
      async () => (await heartbeats.list()).map(serialiseHeartbeat),
    );

    app.post(
      '/api/heartbeats',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Define a heartbeat (admins)',
          body: HeartbeatInputSchema,
          response: { 201: HeartbeatSchema, 400: ErrorSchema, 403: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) =>
        reply
          .status(201)
          .send(serialiseHeartbeat(await heartbeats.create(principalOf(request), request.body, request.ip))),
    );

    app.delete(
      '/api/heartbeats/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete a heartbeat (admins)',
          params: IdParams,
          response: { 204: NoContent, 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await heartbeats.delete(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/api/heartbeats/:id/ping',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'A sign of life (cron jobs); resolves its missed-heartbeat incident',
          params: IdParams,
          response: { 200: HeartbeatSchema, 404: ErrorSchema },
        },
      },
      async (request) => serialiseHeartbeat(await heartbeats.ping(request.params.id)),
    );
  };
}
