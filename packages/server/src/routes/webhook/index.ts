import type { FastifyError, FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WebhookAcceptedSchema, WebhookPayload, errors } from '@terdut/contract';
import type { IntakeService } from '../../services/intake.ts';
import type { Metrics } from '../../metrics.ts';
import type { Clock } from '../../clock.ts';
import { parseNotification } from '../../alertmanager/parse.ts';
import { ApiError } from '../../errors.ts';
import { access } from '../../http/route-auth.ts';
import { BodyBudget, limitBodiesInFlight } from '../../http/body-budget.ts';

/**
 * Notification bytes read at once. A notification takes about 2.5 times its
 * size in heap while it is parsed and written: 64 MiB of bodies is about
 * 160 MiB of a heap capped at 512 MiB (bin/terdut-server), and eight of the
 * largest (8 MiB) notifications at a time; the rest wait their turn unread.
 * Shapes that take far more than that (deep nesting, masses of empty
 * arrays) are refused before they are parsed (http/json-bodies.ts).
 */
const WEBHOOK_BODY_BUDGET_BYTES = 64 * 1024 * 1024;

/**
 * `POST /api/webhook/alertmanager`: Alertmanager's webhook v4. 200 only after
 * commit; 400 for payloads we cannot use; 5xx (which Alertmanager retries)
 * only for server faults.
 */
export function webhookRoutes(intake: IntakeService, metrics: Metrics, clock: Clock) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    // Route-level, so it runs after authentication (an application hook).
    app.addHook('onRequest', limitBodiesInFlight(new BodyBudget(WEBHOOK_BODY_BUDGET_BYTES)));
    // The one place a refused payload is counted: a schema failure, or the adapter's 400.
    app.addHook('onError', async (_request, _reply, error: FastifyError | ApiError) => {
      const refused = error instanceof ApiError ? error.status === 400 : error.validation !== undefined;
      if (refused) metrics.webhookNotifications.inc({ outcome: 'rejected' });
    });
    app.post(
      '/api/webhook/alertmanager',
      {
        config: { auth: access.apiKey },
        schema: {
          tags: ['alerts'],
          summary: 'Receive an Alertmanager notification (webhook_configs, version 4)',
          body: WebhookPayload,
          // 408: a large body let in must arrive within 30 s (http/body-budget.ts).
          response: { 200: WebhookAcceptedSchema, ...errors(400, 408) },
        },
      },
      async (request) => {
        const result = await intake.receive(parseNotification(request.body, clock.now()));
        return {
          status: 'accepted' as const,
          ...(result.incident_id !== undefined ? { incident_id: result.incident_id } : {}),
        };
      },
    );
  };
}
