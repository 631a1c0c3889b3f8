import { createHash } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
 * a cross-site request to borrow. A person's browser reads every answer on
 * this path, so errors are pages too (a missing token, an expired link, a
 * failure of ours), linking the incident when a good signature names it.
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
    // Only this plugin's routes: the API's errors stay JSON.
    app.setErrorHandler((error: FastifyError | ApiError | Error, request, reply) =>
      failure(paging, request, reply, error),
    );
    const Token = Type.Object({ token: Type.String({ minLength: 1, maxLength: 2000 }) });

    app.get(
      '/paging/acknowledge',
      { schema: { hide: true, querystring: Token }, config: { auth: access.public } },
      async (request, reply) => {
        const { incident, person } = await paging.describeCapability(request.query.token);
        const heading = `<p><strong>#${incident.id} ${escapeHtml(incident.title)}</strong></p>`;
        // Acknowledged or resolved: nothing is left to press (the button would change nothing).
        if (incident.status !== 'triggered') {
          const done =
            incident.status === 'resolved'
              ? 'It is already resolved: there is nothing to acknowledge.'
              : 'It is already acknowledged: paging for it has stopped.';
          return page(
            reply,
            200,
            'Nothing to acknowledge',
            `${heading}<p>${done}</p>` +
              incidentLink(await paging.incidentUrlOfCapability(request.query.token)),
          );
        }
        return page(
          reply,
          200,
          'Acknowledge this incident?',
          `${heading}
<p>You will acknowledge it as ${escapeHtml(person.username)}; paging for it stops.</p>
<form method="post" action="/paging/acknowledge">
<input type="hidden" name="token" value="${escapeHtml(request.query.token)}">
<button type="submit">Acknowledge</button>
</form>`,
        );
      },
    );

    app.post(
      '/paging/acknowledge',
      { schema: { hide: true, body: Token }, config: { auth: access.public } },
      async (request, reply) => {
        const outcome = await paging.acknowledgeWithCapability(request.body.token);
        const title = outcome.result === 'acknowledged' ? 'Acknowledged' : 'Already acknowledged';
        return page(
          reply,
          200,
          title,
          `<p>Incident #${outcome.incident_id}: ${escapeHtml(outcome.result)}.</p>` +
            incidentLink(await paging.incidentUrlOfCapability(request.body.token)),
        );
      },
    );
  };
}

/**
 * Any error on this path as a page with its status: the service's answer
 * (expired, altered, resolved …), a link without its token, a failure of
 * ours (logged as the API's error handler logs it).
 */
async function failure(
  paging: PagingService,
  request: FastifyRequest,
  reply: FastifyReply,
  error: FastifyError | ApiError | Error,
): Promise<FastifyReply> {
  const title = 'Cannot acknowledge';
  const token = tokenOf(request);
  // Only a token whose signature is good names an incident worth linking.
  const link = incidentLink(
    token === undefined ? undefined : await paging.incidentUrlOfCapability(token).catch(() => undefined),
  );
  if (error instanceof ApiError) {
    return page(reply, error.status, title, `<p>${escapeHtml(error.message)}</p>${link}`);
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return page(
      reply,
      400,
      title,
      '<p>This acknowledge link is incomplete: its <code>token</code> is missing, empty or not one terdut ' +
        'issued. Open the link in the message again (all of it, if your mail program broke it across lines), ' +
        'or open the incident in terdut.</p>',
    );
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return page(reply, status, title, `<p>${escapeHtml(fastifyError.message)}</p>${link}`);
  }
  // Code, message and stack only, as http/errors.ts: database errors may carry row values.
  const { name, message, stack, code } = error as Error & { code?: unknown };
  request.log.error({ err: { type: name, message, stack, code } }, 'request failed');
  return page(
    reply,
    500,
    title,
    `<p>terdut could not answer (an error on the server; its log says more). Try again in a moment, or open the incident in terdut.</p>${link}`,
  );
}

/** The token a request carries (query for the GET, form for the POST), when it is one string. */
function tokenOf(request: FastifyRequest): string | undefined {
  const from = (request.method === 'POST' ? request.body : request.query) as { token?: unknown } | undefined;
  const token = from?.token;
  return typeof token === 'string' && token !== '' && token.length <= 2000 ? token : undefined;
}

function incidentLink(url: string | undefined): string {
  return url === undefined ? '' : `<p><a href="${escapeHtml(url)}">Open the incident in terdut</a></p>`;
}

/**
 * The page's only style: a button a thumb can hit (48 px, as Android's and
 * WCAG's target sizes ask), on a page read on the phone that got the page.
 * Allowed by its hash, so the policy still refuses any other style or script.
 */
const STYLE =
  'body{font-family:system-ui,sans-serif;margin:1rem;line-height:1.4;overflow-wrap:anywhere}h1{font-size:1.5rem}' +
  'button{min-height:48px;padding:.75rem 1.25rem;font-size:1.125rem}';
const CONTENT_SECURITY_POLICY =
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
  "form-action 'self'; frame-ancestors 'none'";

function page(reply: FastifyReply, status: number, title: string, body: string): FastifyReply {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .send(
      // The viewport: the link is mostly opened on the phone that got the page, and without it a
      // phone lays the page out 980 px wide and shrinks it, button and all, to a third.
      `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
        `<meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escapeHtml(title)} · terdut</title><style>${STYLE}</style></head>` +
        `<body><h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`,
    );
}
