import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { TOP_ALERTS_DEFAULT, TOP_ALERTS_MAX, type StatisticsService } from '../../services/statistics.ts';
import { access } from '../../http/route-auth.ts';

const Count = Type.Integer({ minimum: 0 });
const Seconds = Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
  description: 'null when there is no data yet (no data is not zero)',
});
const COUNTING_RULE =
  'Archived alerts and incidents count: archiving hides from the work queue, it does not undo history. ' +
  'An occurrence is one alert taking part in one incident, timed by when it started firing.';

/** `/api/stats/*`: readable by every signed-in user; all figures computed in the database. */
export function statsRoutes(stats: StatisticsService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['statistics'];

    app.get(
      '/api/stats/alerts',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Alerts by state',
          description:
            'A firing alert not refreshed for TERDUT_ALERT_STALE_AFTER counts as resolved. ' + COUNTING_RULE,
          response: { 200: Type.Object({ total: Count, firing: Count, resolved: Count }) },
        },
      },
      async () => stats.alertCounts(),
    );

    app.get(
      '/api/stats/alerts/top',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Alert names by number of occurrences, most first',
          description: COUNTING_RULE,
          querystring: Type.Object({
            limit: Type.Optional(
              Type.Integer({ minimum: 1, maximum: TOP_ALERTS_MAX, default: TOP_ALERTS_DEFAULT }),
            ),
          }),
          response: { 200: Type.Array(Type.Object({ name: Type.String(), count: Count })) },
        },
      },
      async (request) => stats.topAlerts(request.query.limit),
    );

    app.get(
      '/api/stats/alerts/by-hour',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Occurrences by hour of day in TERDUT_TIMEZONE; always 24 entries, 0-23',
          description: COUNTING_RULE,
          response: {
            200: Type.Array(Type.Object({ hour: Type.Integer({ minimum: 0, maximum: 23 }), count: Count })),
          },
        },
      },
      async () => stats.alertsByHour(),
    );

    app.get(
      '/api/stats/alerts/by-day',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Occurrences by weekday in TERDUT_TIMEZONE; always 7 entries, Sunday = 0',
          description: COUNTING_RULE,
          response: {
            200: Type.Array(
              Type.Object({
                day: Type.Integer({ minimum: 0, maximum: 6 }),
                day_name: Type.String(),
                count: Count,
              }),
            ),
          },
        },
      },
      async () => stats.alertsByDay(),
    );

    app.get(
      '/api/stats/incidents',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Incidents by status, mean time to acknowledge and to resolve',
          description:
            'mtta_seconds averages acknowledged_at - triggered_at over incidents that carry an acknowledgement; ' +
            'mttr_seconds averages resolved_at - triggered_at over resolved incidents. ' +
            COUNTING_RULE,
          response: {
            200: Type.Object({
              total: Count,
              triggered: Count,
              acknowledged: Count,
              resolved: Count,
              mtta_seconds: Seconds,
              mttr_seconds: Seconds,
            }),
          },
        },
      },
      async () => stats.incidents(),
    );
  };
}
