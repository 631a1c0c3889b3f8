import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  AssignDaysBody,
  IdParams,
  NoContent,
  ScheduleEntrySchema,
  ScheduleQuery,
  errors,
  type ScheduleEntry,
} from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { ScheduleService } from '../../services/schedule.ts';
import type { ScheduleEntryRow } from '../../repositories/schedule.ts';
import { access } from '../../http/route-auth.ts';

/** Row → wire object. */
export function serializeScheduleEntry(row: ScheduleEntryRow): ScheduleEntry {
  return {
    id: row.id,
    user_id: row.user_id,
    username: row.username,
    date: row.date,
    created_at: row.created_at.toISOString(),
  };
}

/** `/api/schedule`: who is on call on which day. Reads for everyone, changes for admins. */
export function scheduleRoutes(schedule: ScheduleService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['schedule'];
    const entryList = Type.Array(ScheduleEntrySchema);

    app.get(
      '/api/schedule',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Entries in a date range, oldest first',
          description:
            'from defaults to today (TERDUT_TIMEZONE), to to from + 30 days; both inclusive. ' +
            'Ordered by date ascending: a schedule reads forward like a calendar.',
          querystring: ScheduleQuery,
          response: { 200: entryList, ...errors(400) },
        },
      },
      async (request) => {
        const rows = await schedule.list(request.query);
        return rows.map(serializeScheduleEntry);
      },
    );

    app.get(
      '/api/schedule/current',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: "Today's entry (TERDUT_TIMEZONE); 404 when no one is on call today",
          response: { 200: ScheduleEntrySchema, ...errors(404) },
        },
      },
      async () => serializeScheduleEntry(await schedule.current()),
    );

    app.post(
      '/api/schedule',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Put one person on call for some dates (admins)',
          description:
            'All or nothing. A date someone else holds is refused with 409 unless replace is true; ' +
            'dates the person already holds are kept; repeated dates count once.',
          body: AssignDaysBody,
          response: { 201: entryList, ...errors(400, 403, 404, 409) },
        },
      },
      async (request, reply) => {
        const rows = await schedule.assign(principalOf(request), {
          userId: request.body.user_id,
          dates: request.body.dates,
          replace: request.body.replace ?? false,
        });
        return reply.status(201).send(rows.map(serializeScheduleEntry));
      },
    );

    app.delete(
      '/api/schedule/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete one entry (admins)',
          params: IdParams,
          response: { 204: NoContent, ...errors(400, 403, 404) },
        },
      },
      async (request, reply) => {
        await schedule.remove(principalOf(request), request.params.id);
        return reply.status(204).send(null);
      },
    );
  };
}
