import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../http/authentication.ts';
import type { IncidentService } from '../../services/incidents.ts';
import { IncidentEventSchema, IncidentSchema, serialiseEvent, serialiseIncident } from './wire.ts';
import { access } from '../../http/route-auth.ts';
import { IdSchema } from '../../http/ids.ts';

const ListQuery = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal('triggered'), Type.Literal('acknowledged'), Type.Literal('resolved')]),
  ),
  archived: Type.Optional(
    Type.Boolean({ description: 'true: archived incidents instead of the default set' }),
  ),
  snoozed: Type.Optional(
    Type.Boolean({ description: 'true: currently snoozed incidents instead of the default set' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
});
const IdParams = Type.Object({ id: IdSchema });
const NoteParams = Type.Object({ id: IdSchema, event_id: IdSchema });
const AssignBody = Type.Object({ user_id: IdSchema });
const SnoozeBody = Type.Object({
  duration: Type.String({ description: 'Go-style duration: 30m, 2h, 1h30m', maxLength: 64 }),
});
const NoteBody = Type.Object({ content: Type.String({ minLength: 1, maxLength: 20_000 }) });
const NoContent = Type.Null({ description: 'no content' });

/** Incidents: the list, one incident, its timeline and every action people take on it. */
export function incidentRoutes(service: IncidentService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const incidents = () => service;
    const tags = ['incidents'];
    const one = { tags, params: IdParams, response: { 200: IncidentSchema } };
    const none = { tags, params: IdParams, response: { 204: NoContent } };

    app.get(
      '/api/incidents',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Incidents, newest first. Default: open, not archived, not currently snoozed',
          querystring: ListQuery,
          response: { 200: Type.Array(IncidentSchema) },
        },
      },
      async (request) => (await incidents().list(request.query)).map((row) => serialiseIncident(row)),
    );
    app.get(
      '/api/incidents/:id',
      { config: { auth: access.signedIn }, schema: { ...one, summary: 'One incident with its alerts' } },
      async (request) => {
        const { incident, alerts } = await incidents().get(request.params.id);
        return serialiseIncident(incident, alerts);
      },
    );
    app.get(
      '/api/incidents/:id/timeline',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Timeline, oldest first',
          params: IdParams,
          response: { 200: Type.Array(IncidentEventSchema) },
        },
      },
      async (request) => (await incidents().timeline(request.params.id)).map(serialiseEvent),
    );
    app.post(
      '/api/incidents/:id/acknowledge',
      { config: { auth: access.signedIn }, schema: { ...one, summary: 'Acknowledge' } },
      async (request) =>
        serialiseIncident(await incidents().acknowledge(principalOf(request), request.params.id)),
    );
    app.delete(
      '/api/incidents/:id/acknowledge',
      { config: { auth: access.signedIn }, schema: { ...none, summary: 'Take the acknowledgement back' } },
      async (request, reply) => {
        await incidents().unacknowledge(principalOf(request), request.params.id);
        return reply.status(204).send(null);
      },
    );
    app.post(
      '/api/incidents/:id/assign',
      {
        config: { auth: access.signedIn },
        schema: { ...one, body: AssignBody, summary: 'Assign to a person (404 if no such user)' },
      },
      async (request) =>
        serialiseIncident(
          await incidents().assign(principalOf(request), request.params.id, request.body.user_id),
        ),
    );
    app.post(
      '/api/incidents/:id/snooze',
      {
        config: { auth: access.signedIn },
        schema: { ...one, body: SnoozeBody, summary: 'Snooze for a Go-style duration' },
      },
      async (request) =>
        serialiseIncident(
          await incidents().snooze(principalOf(request), request.params.id, request.body.duration),
        ),
    );
    app.delete(
      '/api/incidents/:id/snooze',
      { config: { auth: access.signedIn }, schema: { ...none, summary: 'End the snooze' } },
      async (request, reply) => {
        await incidents().unsnooze(principalOf(request), request.params.id);
        return reply.status(204).send(null);
      },
    );
    app.post(
      '/api/incidents/:id/resolve',
      {
        config: { auth: access.signedIn },
        schema: { ...one, summary: 'Resolve by hand (terminal; 409 if already resolved)' },
      },
      async (request) =>
        serialiseIncident(await incidents().resolve(principalOf(request), request.params.id)),
    );
    app.post(
      '/api/incidents/:id/archive',
      {
        config: { auth: access.signedIn },
        schema: { ...one, summary: 'Archive a resolved incident (409 otherwise)' },
      },
      async (request) =>
        serialiseIncident(await incidents().archive(principalOf(request), request.params.id)),
    );
    app.delete(
      '/api/incidents/:id/archive',
      { config: { auth: access.signedIn }, schema: { ...none, summary: 'Take out of the archive' } },
      async (request, reply) => {
        await incidents().unarchive(principalOf(request), request.params.id);
        return reply.status(204).send(null);
      },
    );
    app.post(
      '/api/incidents/:id/notes',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Add a note; answers the new event',
          params: IdParams,
          body: NoteBody,
          response: { 201: IncidentEventSchema },
        },
      },
      async (request, reply) => {
        const event = await incidents().addNote(
          principalOf(request),
          request.params.id,
          request.body.content,
        );
        return reply.status(201).send(serialiseEvent(event));
      },
    );
    app.delete(
      '/api/incidents/:id/notes/:event_id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Delete one of your own notes (403 for others, 409 for events that are not notes)',
          params: NoteParams,
          response: { 204: NoContent },
        },
      },
      async (request, reply) => {
        await incidents().deleteNote(principalOf(request), request.params.id, request.params.event_id);
        return reply.status(204).send(null);
      },
    );
  };
}
