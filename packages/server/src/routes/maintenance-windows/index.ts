import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  ErrorSchema,
  IdParams,
  MaintenanceWindowInputSchema,
  MaintenanceWindowSchema,
  NoContent,
} from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { MaintenanceWindowService } from '../../services/paging/maintenance-windows.ts';
import { serialiseWindow } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** `/api/maintenance-windows`: when matching incidents page nobody. Everyone reads; admins change (audited). */
export function maintenanceWindowRoutes(windows: MaintenanceWindowService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['paging'];

    app.get(
      '/api/maintenance-windows',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Maintenance windows that have not ended, soonest first',
          response: { 200: Type.Array(MaintenanceWindowSchema) },
        },
      },
      async () => (await windows.list()).map(serialiseWindow),
    );

    app.post(
      '/api/maintenance-windows',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Schedule a maintenance window (admins)',
          description:
            'Matching incidents are recorded but page nobody; running escalations of matching incidents wait; ' +
            'at the end, anything open and unacknowledged pages from step 1.',
          body: MaintenanceWindowInputSchema,
          response: { 201: MaintenanceWindowSchema, 400: ErrorSchema, 403: ErrorSchema },
        },
      },
      async (request, reply) =>
        reply
          .status(201)
          .send(serialiseWindow(await windows.create(principalOf(request), request.body, request.ip))),
    );

    app.delete(
      '/api/maintenance-windows/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete a maintenance window (admins); held paging resumes now',
          params: IdParams,
          response: { 204: NoContent, 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await windows.delete(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
