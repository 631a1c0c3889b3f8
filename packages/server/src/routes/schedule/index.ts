import type { FastifyInstance } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/authentication.ts';
import type { ScheduleService } from '../../services/schedule.ts';
import { MAX_DATES_PER_REQUEST } from '../../services/schedule.ts';
import type { ScheduleEntryRow } from '../../repositories/schedule.ts';
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
  },
  { title: 'ScheduleEntry', description: 'One person on call for one calendar day' },
);

const ErrorSchema = Type.Object({ error: Type.String() });

/** Row → wire object. */
export function serializeScheduleEntry(row: ScheduleEntryRow) {
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
          summary: "Today's entry (TERDUT_TIMEZONE); 404 when no one is on call today",
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
          params: Type.Object({ id: IdSchema }),
          response: { 204: Type.Null(), 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await schedule.remove(principalOf(request), request.params.id);
        return reply.status(204).send(null);
      },
    );
  };
}
