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
import type { DayEntry } from '../../services/schedule.ts';
import { access } from '../../http/route-auth.ts';

/** Row → wire object. */
export function serializeScheduleEntry(row: DayEntry): ScheduleEntry {
  return {
    id: row.id,
    user_id: row.user_id,
    username: row.username,
    date: row.date,
    created_at: row.created_at.toISOString(),
    ...(row.rotation_id === undefined ? {} : { rotation_id: row.rotation_id, rotation: row.rotation }),
    ...(row.override_id === undefined ? {} : { override_id: row.override_id }),
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
            "from defaults to today (the default schedule's zone, TERDUT_TIMEZONE unless set), to to " +
            'from + 30 days; both inclusive, at most 366 days. Each day lists everyone on call that day ' +
            'in the default schedule (stored entries, rotations, overrides), in order. Ordered by date ' +
            'ascending: a schedule reads forward like a calendar.',
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
          summary: "Today's entry of whoever is on call now in the default schedule; 404 when no one is",
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
        const rows = await schedule.assign(
          principalOf(request),
          {
            userId: request.body.user_id,
            dates: request.body.dates,
            replace: request.body.replace ?? false,
          },
          request.ip,
        );
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
          description:
            'Deletes the override behind the entry. A cover spanning instants (override_id) that is ' +
            'running ends now instead, so who was on call until then stays on record and today still ' +
            'lists it. An entry a rotation gives has nothing to delete: 409 naming the rotation (add an ' +
            'override instead).',
          params: IdParams,
          response: { 204: NoContent, ...errors(400, 403, 404, 409) },
        },
      },
      async (request, reply) => {
        await schedule.remove(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
