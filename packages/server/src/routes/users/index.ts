import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  CreateUserBody,
  IdParams,
  MeSchema,
  NoContent,
  NotifyTopicBody,
  RoleBody,
  UserSchema,
  errors,
} from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { UserService } from '../../services/users.ts';
import { serializeUser } from './wire.ts';
import { access } from '../../http/route-auth.ts';

/** `/api/me` and `/api/users`: the caller, people, their roles and notification topics. */
export function userRoutes(users: UserService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['users'];

    app.get(
      '/api/me',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'The caller',
          response: { 200: MeSchema, ...errors(401) },
        },
      },
      async (request) => {
        const { user, calendarFeedCreatedAt } = await users.me(principalOf(request));
        return {
          user: serializeUser(user),
          has_password: user.has_password,
          ...(calendarFeedCreatedAt ? { calendar_feed_created_at: calendarFeedCreatedAt.toISOString() } : {}),
        };
      },
    );

    app.get(
      '/api/users',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'People, newest first (service accounts are not listed)',
          description: "Another person's `ntfy_topic` is shown to admins only.",
          response: { 200: Type.Array(UserSchema) },
        },
      },
      async (request) => (await users.list(principalOf(request))).map(serializeUser),
    );

    app.post(
      '/api/users',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Create a person (admins)',
          description: '409 when the username is taken. `role` defaults to member.',
          body: CreateUserBody,
          response: { 201: UserSchema, ...errors(400, 403, 409) },
        },
      },
      async (request, reply) => {
        const user = await users.create(principalOf(request), request.body, request.ip);
        return reply.status(201).send(serializeUser(user));
      },
    );

    app.delete(
      '/api/users/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete a person and their API keys (admins)',
          description: 'Soft delete: timelines keep the name. 409 for yourself and for the last admin.',
          params: IdParams,
          response: { 204: NoContent, ...errors(400, 403, 404, 409) },
        },
      },
      async (request, reply) => {
        await users.delete(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.put(
      '/api/users/:id/notify',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Set the ntfy topic ("" clears it); your own, or anyone\'s as an admin',
          params: IdParams,
          body: NotifyTopicBody,
          response: { 200: UserSchema, ...errors(400, 403, 404) },
        },
      },
      async (request) =>
        serializeUser(
          await users.setNotifyTopic(
            principalOf(request),
            request.params.id,
            request.body.ntfy_topic,
            request.ip,
          ),
        ),
    );

    app.put(
      '/api/users/:id/role',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Make a person admin or member (admins)',
          description: '409 when this would leave no admin.',
          params: IdParams,
          body: RoleBody,
          response: { 200: UserSchema, ...errors(400, 403, 404, 409) },
        },
      },
      async (request) =>
        serializeUser(
          await users.setRole(principalOf(request), request.params.id, request.body.role, request.ip),
        ),
    );
  };
}
