import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AlertService } from '../../services/alerts.ts';
import { AlertSchema, serialiseAlert } from './wire.ts';
import { access } from '../../http/route-auth.ts';
import { IdSchema } from '../../http/ids.ts';

const ListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('firing'), Type.Literal('resolved')])),
  archived: Type.Optional(
    Type.Boolean({ description: 'true: only archived alerts; otherwise only those not archived' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
});
const IdParams = Type.Object({ id: IdSchema });

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
          summary: 'Alerts, newest first',
          querystring: ListQuery,
          response: { 200: Type.Array(AlertSchema) },
        },
      },
      async (request) => (await alerts.list(request.query)).map(serialiseAlert),
    );
    app.get(
      '/api/alerts/:id',
      {
        config: { auth: access.signedIn },
        schema: { tags: ['alerts'], summary: 'One alert', params: IdParams, response: { 200: AlertSchema } },
      },
      async (request) => serialiseAlert(await alerts.get(request.params.id)),
    );
  };
}
