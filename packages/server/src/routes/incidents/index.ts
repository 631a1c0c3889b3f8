import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  AssignBody,
  EventIdParams,
  IdParams,
  IncidentEventSchema,
  IncidentListQuery,
  IncidentSchema,
  NoContent,
  NoteBody,
  SnoozeBody,
  errors,
} from '@terdut/contract';
import type { Incident } from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { IncidentService } from '../../services/incidents.ts';
import { incidentWithAlertsJson, serializeEvent, serializeIncident } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** Incidents: the list, one incident, its timeline and every action people take on it. */
export function incidentRoutes(service: IncidentService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const incidents = () => service;
    const tags = ['incidents'];
    // Every action may meet a bad id (400), a missing incident (404) or an
    // incident whose state forbids it (409, e.g. resolved).
    const refusals = errors(400, 404, 409);
    const one = { tags, params: IdParams, response: { 200: IncidentSchema, ...refusals } };
    const none = { tags, params: IdParams, response: { 204: NoContent, ...refusals } };

    app.get(
      '/api/incidents',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Incidents, newest first. Default: open, not archived, not currently snoozed',
          querystring: IncidentListQuery,
          response: { 200: Type.Array(IncidentSchema), ...errors(400) },
        },
      },
      async (request) => (await incidents().list(request.query)).map((row) => serializeIncident(row)),
    );
    app.get(
      '/api/incidents/:id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'One incident with its alerts',
          params: IdParams,
          response: { 200: IncidentSchema, ...errors(400, 404) },
        },
      },
      async (request, reply) => {
        const { incident, alertsJsonParts } = await incidents().get(request.params.id);
        // JSON bytes already (routes/incidents/wire.ts): Fastify sends a buffer
        // as it is, so the schema documents this body and does not serialise it.
        const body = incidentWithAlertsJson(incident, alertsJsonParts) as unknown as Incident;
        return reply.type('application/json; charset=utf-8').send(body);
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
          response: { 200: Type.Array(IncidentEventSchema), ...errors(400, 404) },
        },
      },
      async (request) => (await incidents().timeline(request.params.id)).map(serializeEvent),
    );
    app.post(
      '/api/incidents/:id/acknowledge',
      { config: { auth: access.signedIn }, schema: { ...one, summary: 'Acknowledge' } },
      async (request) =>
        serializeIncident(await incidents().acknowledge(principalOf(request), request.params.id)),
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
        serializeIncident(
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
        serializeIncident(
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
        serializeIncident(await incidents().resolve(principalOf(request), request.params.id)),
    );
    app.post(
      '/api/incidents/:id/archive',
      {
        config: { auth: access.signedIn },
        schema: { ...one, summary: 'Archive a resolved incident (409 otherwise)' },
      },
      async (request) =>
        serializeIncident(await incidents().archive(principalOf(request), request.params.id)),
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
          response: { 201: IncidentEventSchema, ...errors(400, 404) },
        },
      },
      async (request, reply) => {
        const event = await incidents().addNote(
          principalOf(request),
          request.params.id,
          request.body.content,
        );
        return reply.status(201).send(serializeEvent(event));
      },
    );
    app.delete(
      '/api/incidents/:id/notes/:event_id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Delete one of your own notes (403 for others, 409 for events that are not notes)',
          params: EventIdParams,
          response: { 204: NoContent, ...errors(400, 403, 404, 409) },
        },
      },
      async (request, reply) => {
        await incidents().deleteNote(principalOf(request), request.params.id, request.params.event_id);
        return reply.status(204).send(null);
      },
    );
  };
}
