import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../errors.ts';
import { secretsEqual } from '../auth/secrets.ts';
import { csrfTokenOf } from '../services/sessions.ts';
import { arrivedOverHttps, CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from './session-cookies.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request forgery protection for browser sessions, driven by the
 * matched route's declaration (http/route-auth.ts), never by the URL text.
 * A state-changing request to a route that accepts sessions must
 *  - if a session cookie authenticated it, carry the session's CSRF token in
 *    X-CSRF-Token (double submit: the token is in the readable `terdut_csrf`
 *    cookie, which another site's page cannot read), and
 *  - if the browser sent an Origin header, come from our own origin
 *    (TERDUT_PUBLIC_URL, or the Host it was sent to).
 * The Origin check also applies to public routes declared `sameOrigin`
 * (/auth/login), so another site cannot sign a visitor in to an account of
 * its choosing. Requests authenticated by an API key, a bootstrap token or a
 * capability carry no ambient credentials and are not checked.
 * Runs after installAuthentication (it reads request.principal).
 */
export function installCsrfProtection(
  app: FastifyInstance,
  options: { publicUrl: string | undefined },
): void {
  app.addHook('onRequest', async (request) => {
    if (SAFE_METHODS.has(request.method) || request.is404) return;
    const auth = request.routeOptions.config.auth;
    const browserRoute =
      (auth?.kind === 'principal' && auth.via.includes('session')) ||
      (auth?.kind === 'public' && auth.sameOrigin === true);
    if (!browserRoute || request.principal?.via === 'api_key') return;

    const origin = request.headers.origin;
    if (origin !== undefined && !allowedOrigins(request, options.publicUrl).includes(origin)) {
      throw forbidden(
        `cross-site request refused: Origin ${origin} is not this server's origin` +
          (options.publicUrl ? ` (${new URL(options.publicUrl).origin})` : ''),
      );
    }
    if (request.principal?.via !== 'session') return;
    const sessionCookie = request.cookies[SESSION_COOKIE]!;
    const token = request.headers[CSRF_HEADER];
    if (typeof token !== 'string' || !secretsEqual(token, csrfTokenOf(sessionCookie))) {
      throw forbidden(
        `missing or wrong CSRF token: a request signed in by cookie must send the value of the ${CSRF_COOKIE} cookie ` +
          `in the X-CSRF-Token header (or use an API key)`,
      );
    }
  });
}

function allowedOrigins(request: FastifyRequest, publicUrl: string | undefined): string[] {
  const origins: string[] = [];
  if (publicUrl !== undefined) origins.push(new URL(publicUrl).origin);
  const host = request.headers.host;
  if (host !== undefined) {
    origins.push(`${arrivedOverHttps(request, undefined) ? 'https' : 'http'}://${host}`);
  }
  return origins;
}
