import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/authentication.ts';
import type { ScheduleService } from '../../services/schedule.ts';
import { MAX_DATES_PER_REQUEST } from '../../services/schedule.ts';
import type { DayEntry } from '../../services/schedule.ts';
import { access } from '../../http/route-auth.ts';
import { IdSchema } from '../../http/ids.ts';

const CalendarDate = Type.String({ description: 'calendar date, YYYY-MM-DD', examples: ['2026-07-27'] });

/** `ScheduleEntry` of api-contract.md; every field is always present. */
export const ScheduleEntrySchema = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    username: Type.String(),
    date: CalendarDate,
    created_at: Type.String({ format: 'date-time' }),
    rotation_id: Type.Optional(
      Type.Integer({ description: 'set when a rotation gives this day (no stored entry)' }),
    ),
    rotation: Type.Optional(Type.String({ description: 'name of that rotation' })),
    override_id: Type.Optional(
      Type.Integer({ description: 'set when an override spanning instants (not a whole day) gives it' }),
    ),
  },
  {
    title: 'ScheduleEntry',
    description:
      'One person on call on one calendar day of the default schedule. Stored day entries carry the ' +
      'five base fields only; a day a rotation covers carries rotation_id and rotation too.',
  },
);

const ErrorSchema = Type.Object({ error: Type.String() });

/** Row → wire object. */
export function serializeScheduleEntry(row: DayEntry) {
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
          querystring: Type.Object({ from: Type.Optional(CalendarDate), to: Type.Optional(CalendarDate) }),
          response: { 200: entryList, 400: ErrorSchema },
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
          response: { 200: ScheduleEntrySchema, 404: ErrorSchema },
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
          body: Type.Object({
            user_id: IdSchema,
            dates: Type.Array(CalendarDate, { maxItems: MAX_DATES_PER_REQUEST * 4 }),
            replace: Type.Optional(Type.Boolean({ default: false })),
          }),
          response: {
            201: entryList,
            400: ErrorSchema,
            403: ErrorSchema,
            404: ErrorSchema,
            409: ErrorSchema,
          },
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
            'Deletes the override behind the entry. An entry a rotation gives has nothing to delete: ' +
            '409 naming the rotation (add an override instead).',
          params: Type.Object({ id: IdSchema }),
          response: { 204: Type.Null(), 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await schedule.remove(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
