import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StartedSession } from '../services/sessions.ts';

/** The session cookie: HttpOnly, so page scripts (and injected ones) cannot read it. */
export const SESSION_COOKIE = 'terdut_session';
/** The CSRF token cookie: readable by the web UI, which echoes it in X-CSRF-Token. */
export const CSRF_COOKIE = 'terdut_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/**
 * True when the browser reached us over HTTPS: directly, through a proxy
 * we trust that says so (X-Forwarded-Proto), or per TERDUT_PUBLIC_URL. Secure cookies
 * are then never sent over plain HTTP.
 */
export function arrivedOverHttps(request: FastifyRequest, publicUrl: string | undefined): boolean {
  // request.protocol believes X-Forwarded-Proto only from TERDUT_TRUSTED_PROXIES
  // (Fastify's trustProxy); any other client could claim https and get cookies
  // it may then send over plain HTTP.
  return request.protocol === 'https' || publicUrl?.startsWith('https:') === true;
}

/**
 * Sets the session and CSRF cookies. SameSite=Lax: sent on top-level
 * navigation (the OIDC redirect back to us), not on cross-site subrequests
 * or form posts; the CSRF token covers the rest. No Max-Age: the server's
 * sliding expiry decides how long a session lives.
 */
export function setSessionCookies(
  reply: FastifyReply,
  request: FastifyRequest,
  session: StartedSession,
  publicUrl: string | undefined,
): void {
  const secure = arrivedOverHttps(request, publicUrl);
  reply.setCookie(SESSION_COOKIE, session.cookieValue, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure,
  });
  reply.setCookie(CSRF_COOKIE, session.csrfToken, { httpOnly: false, sameSite: 'lax', path: '/', secure });
}

/** Removes both cookies (sign-out). */
export function clearSessionCookies(
  reply: FastifyReply,
  request: FastifyRequest,
  publicUrl: string | undefined,
): void {
  const secure = arrivedOverHttps(request, publicUrl);
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure });
  reply.clearCookie(CSRF_COOKIE, { httpOnly: false, sameSite: 'lax', path: '/', secure });
}
