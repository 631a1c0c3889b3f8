import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EscalationPolicyInputSchema, EscalationPolicySchema, Id } from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import type { EscalationPolicyService } from '../../services/paging/escalation-policies.ts';
import { ErrorSchema, serialisePolicy } from './wire.ts';
import { access } from '../../http/route-auth.ts';

const IdParams = Type.Object({ id: Id });

/** `/api/escalation-policies`: who is paged for which incidents. Everyone reads; admins change (audited). */
export function escalationPolicyRoutes(policies: EscalationPolicyService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['paging'];

    app.get(
      '/api/escalation-policies',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'Escalation policies in routing order',
          description:
            'The first policy whose matchers all match an incident wins; else the default one; else the built-in default.',
          response: { 200: Type.Array(EscalationPolicySchema) },
        },
      },
      async () => (await policies.list()).map(serialisePolicy),
    );

    app.get(
      '/api/escalation-policies/:id',
      {
        config: { auth: access.signedIn },
        schema: {
          tags,
          summary: 'One escalation policy',
          params: IdParams,
          response: { 200: EscalationPolicySchema, 404: ErrorSchema },
        },
      },
      async (request) => serialisePolicy(await policies.get(request.params.id)),
    );

    app.post(
      '/api/escalation-policies',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Create an escalation policy (admins)',
          body: EscalationPolicyInputSchema,
          response: { 201: EscalationPolicySchema, 400: ErrorSchema, 403: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        const policy = await policies.create(principalOf(request), request.body, request.ip);
        return reply.status(201).send(serialisePolicy(policy));
      },
    );

    app.put(
      '/api/escalation-policies/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Replace an escalation policy (admins)',
          description: 'Escalations already running keep the version they started with.',
          params: IdParams,
          body: EscalationPolicyInputSchema,
          response: {
            200: EscalationPolicySchema,
            400: ErrorSchema,
            403: ErrorSchema,
            404: ErrorSchema,
            409: ErrorSchema,
          },
        },
      },
      async (request) =>
        serialisePolicy(
          await policies.replace(principalOf(request), request.params.id, request.body, request.ip),
        ),
    );

    app.delete(
      '/api/escalation-policies/:id',
      {
        config: { auth: access.admin },
        schema: {
          tags,
          summary: 'Delete an escalation policy (admins)',
          params: IdParams,
          response: { 204: Type.Null(), 403: ErrorSchema, 404: ErrorSchema },
        },
      },
      async (request, reply) => {
        await policies.delete(principalOf(request), request.params.id, request.ip);
        return reply.status(204).send(null);
      },
    );
  };
}
