import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../errors.ts';
import { access } from '../../http/route-auth.ts';
import type { PagingService } from '../../services/paging/paging.ts';
import { escapeHtml } from '../../services/paging/email.ts';

/**
 * `/paging/acknowledge`: the page an email's Acknowledge link opens. The GET
 * only shows what the link would do and a button; mail scanners and link
 * previews fetch links, so a GET must never change state. The button POSTs
 * the capability as a form, and that acknowledges. No script, no cookies:
 * the capability in the form is the only credential, so there is nothing for
 * a cross-site request to borrow.
 */
export function acknowledgePageRoutes(paging: PagingService) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    // Only this plugin's routes accept HTML forms.
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );
    const Token = Type.Object({ token: Type.String({ minLength: 1, maxLength: 2000 }) });

    app.get(
      '/paging/acknowledge',
      { schema: { hide: true, querystring: Token }, config: { auth: access.public } },
      async (request, reply) => {
        try {
          const { incident, person } = await paging.describeCapability(request.query.token);
          const state =
            incident.status === 'triggered' ? '' : `<p>It is already ${escapeHtml(incident.status)}.</p>`;
          return page(
            reply,
            200,
            'Acknowledge this incident?',
            `<p><strong>#${incident.id} ${escapeHtml(incident.title)}</strong></p>${state}
<p>You will acknowledge it as ${escapeHtml(person.username)}; paging for it stops.</p>
<form method="post" action="/paging/acknowledge">
<input type="hidden" name="token" value="${escapeHtml(request.query.token)}">
<button type="submit">Acknowledge</button>
</form>`,
          );
        } catch (error) {
          return failure(reply, error);
        }
      },
    );

    app.post(
      '/paging/acknowledge',
      { schema: { hide: true, body: Token }, config: { auth: access.public } },
      async (request, reply) => {
        try {
          const outcome = await paging.acknowledgeWithCapability(request.body.token);
          const title = outcome.result === 'acknowledged' ? 'Acknowledged' : 'Already acknowledged';
          return page(
            reply,
            200,
            title,
            `<p>Incident #${outcome.incident_id}: ${escapeHtml(outcome.result)}.</p>`,
          );
        } catch (error) {
          return failure(reply, error);
        }
      },
    );
  };
}

function failure(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof ApiError)
    return page(reply, error.status, 'Cannot acknowledge', `<p>${escapeHtml(error.message)}</p>`);
  throw error;
}

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · terdut</title></head>` +
        `<body><h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`,
    );
}
