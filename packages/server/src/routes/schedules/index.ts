import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/authentication.ts';
import { access } from '../../http/route-auth.ts';
import { ifNoneMatchHits } from '../../http/conditional.ts';
import { calendarEntityTag } from '../../services/schedule-calendar.ts';
import {
  ErrorSchema,
  FeedSchema,
  FeedTokenParams,
  IdParams,
  NoContent,
  OnCallNowSchema,
  OnCallQuery,
  OnCallSchema,
  OverrideInputSchema,
  OverrideParams,
  OverrideSchema,
  RotationInputSchema,
  RotationParams,
  RotationSchema,
  ScheduleCreateSchema,
  ScheduleSchema,
  ScheduleUpdateSchema,
  SegmentSchema,
  WindowQuery,
  errors as errorsOf,
} from '@terdut/contract';
import { instantTextFromQuery } from '../../instant.ts';
import { scheduleInstantField, type SchedulesService } from '../../services/schedules.ts';
import {
  serializeOnCall,
  serializeOverride,
  serializeRotation,
  serializeSchedule,
  serializeSegment,
} from './wire.ts';

const scheduleParams = IdParams;
const errors = errorsOf(400, 403, 404, 409);

/** `from` and `to` with an unencoded offset `+` read as typed (instant.ts). */
function windowFromQuery(query: WindowQuery): WindowQuery {
  return {
    ...(query.from !== undefined ? { from: instantTextFromQuery(query.from) } : {}),
    ...(query.to !== undefined ? { to: instantTextFromQuery(query.to) } : {}),
  };
}

function origin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/**
 * `/api/schedules…`: several schedules with rotations and overrides, the
 * effective on-call, and calendar feeds. Reads for everyone signed in,
 * changes for admins (a person's own feed: that person). `/api/calendar/…`
 * is public by capability: the secret in the URL is the credential.
 */
export function schedulesRoutes(schedules: SchedulesService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['schedules'];

    app.get(
      '/api/schedules',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'All schedules, the default first',
          response: { 200: Type.Array(ScheduleSchema) },
        },
      },
      async () => (await schedules.list()).map(serializeSchedule),
    );

    app.post(
      '/api/schedules',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Create a schedule (admins)',
          body: ScheduleCreateSchema,
          response: { 201: ScheduleSchema, ...errors },
        },
      },
      async (request, reply) => {
        const created = await schedules.create(principalOf(request), request.body, request.ip);
        return reply.status(201).send(serializeSchedule(created));
      },
    );

    app.get(
      '/api/schedules/:id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'One schedule with its rotations, highest layer first',
          params: scheduleParams,
          response: { 200: ScheduleSchema, 404: ErrorSchema },
        },
      },
      async (request) => serializeSchedule(await schedules.get(request.params.id)),
    );

    app.patch(
      '/api/schedules/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Rename, change the zone, or make the default (admins)',
          description: 'Changing the zone moves every handoff with the wall clock of the new zone.',
          params: scheduleParams,
          body: ScheduleUpdateSchema,
          response: { 200: ScheduleSchema, ...errors },
        },
      },
      async (request) =>
        serializeSchedule(
          await schedules.update(principalOf(request), request.params.id, request.body, request.ip),
        ),
    );

    app.delete(
      '/api/schedules/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary:
            "Delete a schedule with its rotations and overrides (admins); 409 for the default, and for one an escalation policy's step pages (naming the steps)",
          params: scheduleParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await schedules.remove(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/api/schedules/:id/rotations',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Add a rotation (admins); without layer it goes on top',
          params: scheduleParams,
          body: RotationInputSchema,
          response: { 201: RotationSchema, ...errors },
        },
      },
      async (request, reply) => {
        const rotation = await schedules.addRotation(
          principalOf(request),
          request.params.id,
          request.body,
          request.ip,
        );
        return reply.status(201).send(serializeRotation(rotation));
      },
    );

    app.put(
      '/api/schedules/:id/rotations/:rotation_id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Replace a rotation (admins)',
          params: RotationParams,
          body: RotationInputSchema,
          response: { 200: RotationSchema, ...errors },
        },
      },
      async (request) =>
        serializeRotation(
          await schedules.replaceRotation(
            principalOf(request),
            request.params.id,
            request.params.rotation_id,
            request.body,
            request.ip,
          ),
        ),
    );

    app.delete(
      '/api/schedules/:id/rotations/:rotation_id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete a rotation (admins)',
          params: RotationParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await schedules.removeRotation(
          principalOf(request),
          request.params.id,
          request.params.rotation_id,
          request.ip,
        );
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/api/schedules/:id/overrides',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Overrides touching [from, to), oldest first (default: now to now + 30 days)',
          params: scheduleParams,
          querystring: WindowQuery,
          response: { 200: Type.Array(OverrideSchema), 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) =>
        (await schedules.listOverrides(request.params.id, windowFromQuery(request.query))).map(
          serializeOverride,
        ),
    );

    app.post(
      '/api/schedules/:id/overrides',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'A person covers [starts_at, ends_at), whoever the rotations give (admins)',
          description: 'Where overrides overlap, the newest wins.',
          params: scheduleParams,
          body: OverrideInputSchema,
          response: { 201: OverrideSchema, ...errors },
        },
      },
      async (request, reply) => {
        const override = await schedules.addOverride(
          principalOf(request),
          request.params.id,
          request.body,
          request.ip,
        );
        return reply.status(201).send(serializeOverride(override));
      },
    );

    app.delete(
      '/api/schedules/:id/overrides/:override_id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary:
            'Delete an override (admins); whole-day ones too. One that is running ends now instead, so its past stays on record',
          params: OverrideParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await schedules.removeOverride(
          principalOf(request),
          request.params.id,
          request.params.override_id,
          request.ip,
        );
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/api/schedules/:id/on-call',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Who is on call at `at` (default now): override, else the highest layer with someone',
          params: scheduleParams,
          querystring: OnCallQuery,
          response: { 200: OnCallSchema, 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) => {
        const at =
          request.query.at === undefined
            ? undefined
            : scheduleInstantField('at', instantTextFromQuery(request.query.at));
        return serializeOnCall(await schedules.onCallAtOrNow(request.params.id, at));
      },
    );

    app.get(
      '/api/schedules/:id/now',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Who is on call now, and who is next',
          params: scheduleParams,
          response: {
            200: OnCallNowSchema,
            404: ErrorSchema,
          },
        },
      },
      async (request) => {
        const answer = await schedules.nowAndNext(request.params.id);
        return {
          now: serializeOnCall(answer.now),
          ...(answer.next ? { next: serializeOnCall(answer.next) } : {}),
        };
      },
    );

    app.get(
      '/api/schedules/:id/timeline',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'The effective schedule over [from, to) (default: now to now + 7 days, at most 366 days)',
          params: scheduleParams,
          querystring: WindowQuery,
          response: { 200: Type.Array(SegmentSchema), 400: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) =>
        (await schedules.timeline(request.params.id, windowFromQuery(request.query))).map(serializeSegment),
    );

    app.post(
      '/api/schedules/:id/feed',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: "Create or rotate the schedule's calendar feed (admins); the old URL stops working",
          params: scheduleParams,
          response: { 201: FeedSchema, ...errors },
        },
      },
      async (request, reply) => {
        const feed = await schedules.rotateScheduleFeed(principalOf(request), request.params.id, {
          clientAddress: request.ip,
          origin: origin(request),
        });
        return reply.status(201).send(feed);
      },
    );

    app.delete(
      '/api/schedules/:id/feed',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: "Turn the schedule's calendar feed off (admins)",
          params: scheduleParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await schedules.deleteFeed(principalOf(request), { scheduleId: request.params.id }, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/api/users/:id/calendar-feed',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary:
            "Create or rotate a person's calendar feed (their shifts in every schedule): self or admins",
          params: scheduleParams,
          response: { 201: FeedSchema, ...errors },
        },
      },
      async (request, reply) => {
        const feed = await schedules.rotatePersonFeed(principalOf(request), request.params.id, {
          clientAddress: request.ip,
          origin: origin(request),
        });
        return reply.status(201).send(feed);
      },
    );

    app.delete(
      '/api/users/:id/calendar-feed',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: "Turn a person's calendar feed off: self or admins",
          params: scheduleParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await schedules.deleteFeed(principalOf(request), { userId: request.params.id }, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/api/calendar/:token',
      {
        // Public by capability: the secret in the URL is the credential, checked by the service.
        config: { auth: access.public },
        // The URL holds the secret: keep it out of the info-level request logs.
        logLevel: 'warn',
        schema: {
          tags,
          summary: 'iCalendar feed (public; the secret URL is the credential)',
          security: [],
          params: FeedTokenParams,
          response: {
            200: {
              description:
                'RFC 5545 text: one event per shift or override with its handoff times, VTIMEZONE included',
              content: { 'text/calendar': { schema: Type.String() } },
            },
            304: {
              description:
                'If-None-Match named the ETag: the same shifts as that copy (only DTSTAMP, the time of writing, would differ)',
            },
            404: ErrorSchema,
          },
        },
      },
      async (request, reply) => {
        const token = request.params.token.replace(/\.ics$/, '');
        const text = await schedules.renderFeed(token);
        const etag = calendarEntityTag(text);
        reply.header('etag', etag).header('cache-control', 'private, max-age=300');
        if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.status(304).send();
        return reply.header('content-type', 'text/calendar; charset=utf-8').send(text);
      },
    );
  };
}
