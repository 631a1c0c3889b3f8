import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  AlertCountsSchema,
  AlertNameCountSchema,
  DayCountSchema,
  HourCountSchema,
  IncidentStatsSchema,
  TopAlertsQuery,
  errors,
} from '@terdut/contract';
import type { StatisticsService } from '../../services/statistics.ts';
import { access } from '../../http/route-auth.ts';
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
          response: { 200: AlertCountsSchema },
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
          querystring: TopAlertsQuery,
          response: { 200: Type.Array(AlertNameCountSchema), ...errors(400) },
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
          response: { 200: Type.Array(HourCountSchema) },
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
          response: { 200: Type.Array(DayCountSchema) },
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
          response: { 200: IncidentStatsSchema },
        },
      },
      async () => stats.incidents(),
    );
  };
}
