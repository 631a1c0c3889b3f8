import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  ContactMethodEnabledSchema,
  ContactMethodInputSchema,
  ContactMethodParams,
  ContactMethodSchema,
  ContactMethodTestSchema,
  ErrorSchema,
  IdParams,
  NoContent,
  errors as errorsOf,
} from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { ContactMethodService } from '../../services/paging/contact-methods.ts';
import { serialiseContactMethod } from './wire.ts';
import { access } from '../../http/route-auth.ts';

const UserParams = IdParams;
const MethodParams = ContactMethodParams;

/** `/api/users/{id}/contact-methods`: how a person is paged. Your own as a member, anyone's as an admin. */
export function contactMethodRoutes(methods: ContactMethodService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['paging'];
    const errors = errorsOf(400, 403, 404);

    app.get(
      '/api/users/:id/contact-methods',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: "A person's contact methods, oldest first",
          description:
            "The contract's ntfy_topic (PUT /api/users/{id}/notify) is paged too, as one more ntfy method.",
          params: UserParams,
          response: { 200: Type.Array(ContactMethodSchema), 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request) =>
        (await methods.list(principalOf(request), request.params.id)).map((row) =>
          serialiseContactMethod(row),
        ),
    );

    app.post(
      '/api/users/:id/contact-methods',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Add a contact method',
          params: UserParams,
          body: ContactMethodInputSchema,
          response: { 201: ContactMethodSchema, ...errors },
        },
      },
      async (request, reply) => {
        const row = await methods.create(principalOf(request), request.params.id, request.body, request.ip);
        return reply.status(201).send(serialiseContactMethod(row, { withSecret: true }));
      },
    );

    app.patch(
      '/api/users/:id/contact-methods/:method_id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Switch a contact method on or off',
          params: MethodParams,
          body: ContactMethodEnabledSchema,
          response: { 200: ContactMethodSchema, ...errors },
        },
      },
      async (request) =>
        serialiseContactMethod(
          await methods.setEnabled(
            principalOf(request),
            request.params.id,
            request.params.method_id,
            request.body.enabled,
            request.ip,
          ),
        ),
    );

    app.delete(
      '/api/users/:id/contact-methods/:method_id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Delete a contact method',
          params: MethodParams,
          response: { 204: NoContent, ...errors },
        },
      },
      async (request, reply) => {
        await methods.delete(principalOf(request), request.params.id, request.params.method_id, request.ip);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/api/users/:id/contact-methods/:method_id/test',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: "Send a test message now and report the provider's answer",
          description:
            'One attempt, no retries: 200 with delivered=false and the answer when the provider refused. ' +
            'At most 10 test messages per person every 10 minutes (429 with Retry-After).',
          params: MethodParams,
          response: { 200: ContactMethodTestSchema, ...errorsOf(400, 403, 404, 429) },
        },
      },
      async (request) => methods.test(principalOf(request), request.params.id, request.params.method_id),
    );
  };
}
