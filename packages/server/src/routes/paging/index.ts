import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  CapabilityAcknowledgeResultSchema,
  CapabilityAcknowledgeSchema,
  ErrorSchema,
  PagingReadinessSchema,
} from '@terdut/contract';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { PagingService } from '../../services/paging/paging.ts';
import { principalOf } from '../../http/authentication.ts';
import { access } from '../../http/route-auth.ts';

/** Every answer of the acknowledge route, errors included: see the OPTIONS route below for why any origin. */
async function allowAnyOrigin(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  reply.header('access-control-allow-origin', '*');
  return payload;
}

/**
 * `POST /api/paging/acknowledge`: the request behind a page's Acknowledge
 * button. Public as far as API keys go: the capability in the body is the
 * credential, and the service verifies it (signature, expiry, incident,
 * person, action).
 */
export function pagingRoutes(paging: PagingService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/api/paging/acknowledge',
      {
        config: { auth: access.public },
        onSend: allowAnyOrigin,
        schema: {
          tags: ['paging'],
          summary: "Acknowledge with a page's capability (the ntfy Acknowledge button)",
          description:
            'Authenticated by the capability in the body, not an API key. Pressing twice is harmless: ' +
            '"already acknowledged". 403 for an altered or expired capability, or one from an earlier round of paging ' +
            'while the incident is triggered again; 409 for a resolved incident.',
          security: [],
          body: CapabilityAcknowledgeSchema,
          response: {
            200: CapabilityAcknowledgeResultSchema,
            400: ErrorSchema,
            403: ErrorSchema,
            404: ErrorSchema,
            409: ErrorSchema,
          },
        },
      },
      async (request) => paging.acknowledgeWithCapability(request.body.token),
    );

    // ntfy's web app (and its PWA) presses the button with fetch() from the
    // ntfy server's origin: its JSON Content-Type makes the browser ask with
    // a preflight first, and read the answer (success, or the refusal's
    // status) only when it allows that origin. Any origin may: the route
    // takes no cookie or other ambient credential (the capability in the body
    // is the only one), so a page elsewhere gains nothing it did not hold.
    app.options(
      '/api/paging/acknowledge',
      { config: { auth: access.public }, onSend: allowAnyOrigin, schema: { hide: true } },
      async (_request, reply) =>
        reply
          .status(204)
          .header('access-control-allow-methods', 'POST')
          .header('access-control-allow-headers', 'content-type')
          .header('access-control-max-age', '86400')
          .send(),
    );

    app.get(
      '/api/paging/me',
      {
        config: { auth: access.signedIn },
        schema: {
          tags: ['paging'],
          summary:
            'Can the caller be paged? A warning when they are on call without a working contact method',
          response: { 200: PagingReadinessSchema },
        },
      },
      async (request) => paging.readiness(principalOf(request).userId),
    );
  };
}
