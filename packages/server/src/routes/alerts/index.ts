import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AlertListQuery, AlertSchema, IdParams, errors } from '@terdut/contract';
import type { AlertService } from '../../services/alerts.ts';
import { serializeAlert } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** `GET /api/alerts` and `GET /api/alerts/{id}` (read-only; alerts change through the intake). */
export function alertRoutes(alerts: AlertService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/api/alerts',
      {
        config: { auth: access.signedIn },
        schema: {
          tags: ['alerts'],
          summary:
            'Alerts, newest first: by when their current occurrence first arrived (not `received_at`, the last time one was carried)',
          querystring: AlertListQuery,
          response: { 200: Type.Array(AlertSchema), ...errors(400) },
        },
      },
      async (request) => (await alerts.list(request.query)).map(serializeAlert),
    );

    app.get(
      '/api/alerts/:id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags: ['alerts'],
          summary: 'One alert',
          params: IdParams,
          response: { 200: AlertSchema, ...errors(400, 404) },
        },
      },
      async (request) => serializeAlert(await alerts.get(request.params.id)),
    );
  };
}
