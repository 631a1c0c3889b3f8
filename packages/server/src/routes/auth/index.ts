import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { IdParams, LoginBody, MeSchema, NoContent, PasswordBody, errors } from '@terdut/contract';
import { principalOf } from '../../http/authentication.ts';
import {
  arrivedOverHttps,
  clearSessionCookies,
  SESSION_COOKIE,
  setSessionCookies,
} from '../../http/session-cookies.ts';
import { OIDC_FLOW_TTL_MS, type OidcSignInService } from '../../services/oidc-sign-in.ts';
import { KNOWN_DEVICE_TTL_MS } from '../../services/known-devices.ts';
import type { SignInService } from '../../services/sign-in.ts';
import type { PasswordService } from '../../services/passwords.ts';
import { serializeUser } from '../users/wire.ts';
import { ApiError } from '../../errors.ts';
import { access } from '../../http/route-auth.ts';

/** Holds the signed OIDC state, nonce and PKCE verifier between the redirect out and the callback. */
const OIDC_FLOW_COOKIE = 'terdut_oidc';
const OIDC_FLOW_PATH = '/auth/oidc';
/** The app's page the sign-in started from (a deep link, or where the session ended), to come back to. */
const OIDC_RETURN_COOKIE = 'terdut_oidc_return';
/**
 * Marks a browser that signed in with a password before, so strangers' wrong passwords do not
 * lock it out (services/known-devices.ts). Sent to /auth/login only; kept at sign-out.
 */
const KNOWN_DEVICE_COOKIE = 'terdut_device';
const KNOWN_DEVICE_PATH = '/auth/login';

/**
 * `returnTo` when it is a page of this site (`/incidents/42`), else `/`. A path only: `//evil.example`
 * and `/\evil.example` are other hosts to a browser, and following them would make the sign-in an
 * open redirect.
 */
function pageOfThisSite(returnTo: string | undefined): string {
  if (returnTo === undefined || !/^\/(?![/\\])[\x21-\x7e]*$/.test(returnTo)) return '/';
  return returnTo.startsWith('/auth/') ? '/' : returnTo;
}

export interface SignInRouteDeps {
  signIn: SignInService;
  oidc: OidcSignInService;
  passwords: PasswordService;
  publicUrl: string | undefined;
}

/**
 * Browser sign-in: `/auth/login`, `/auth/logout`, `/auth/oidc/login`,
 * `/auth/oidc/callback`, and `PUT /api/users/{id}/password`.
 */
export function signInRoutes(deps: SignInRouteDeps) {
  return async (plain: FastifyInstance): Promise<void> => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['sign-in'];
    const { publicUrl } = deps;

    // The person sees the answer; whoever runs the server should see, in the
    // log, that the provider fails or that someone was turned away.
    app.addHook('onError', async (request, _reply, error) => {
      if (!(error instanceof ApiError) || request.routeOptions.url?.startsWith('/auth/') !== true) return;
      if (error.status >= 500) request.log.warn({ reason: error.message }, 'sign-in failed on our side');
      else if (error.status === 403) request.log.info({ reason: error.message }, 'sign-in refused');
    });

    app.post(
      '/auth/login',
      {
        config: { auth: access.publicSameOrigin },
        schema: {
          tags,
          summary: 'Sign in with a username and password; sets the session and CSRF cookies',
          description:
            '403 before the instance is bootstrapped, 401 for a wrong username or password, 429 (Retry-After) ' +
            'after too many failures for the username or from the address.',
          security: [],
          body: LoginBody,
          response: { 200: MeSchema, ...errors(400, 401, 403, 429) },
        },
      },
      async (request, reply) => {
        const { user, session, knownDevice } = await deps.signIn.signInWithPassword({
          username: request.body.username,
          password: request.body.password,
          clientAddress: request.ip,
          knownDevice: request.cookies[KNOWN_DEVICE_COOKIE],
        });
        setSessionCookies(reply, request, session, publicUrl);
        reply.setCookie(KNOWN_DEVICE_COOKIE, knownDevice, {
          httpOnly: true,
          sameSite: 'strict',
          path: KNOWN_DEVICE_PATH,
          secure: arrivedOverHttps(request, publicUrl),
          maxAge: KNOWN_DEVICE_TTL_MS / 1000,
        });
        return { user: serializeUser(user), has_password: true };
      },
    );

    app.post(
      '/auth/logout',
      {
        config: { auth: access.sessionIfAny },
        schema: {
          tags,
          summary: 'Sign out: revokes the session and clears its cookies (needs X-CSRF-Token)',
          security: [],
          response: { 204: NoContent, ...errors(403) },
        },
      },
      async (request, reply) => {
        await deps.signIn.signOut(
          request.principal?.via === 'session' ? request.cookies[SESSION_COOKIE] : undefined,
        );
        clearSessionCookies(reply, request, publicUrl);
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/auth/oidc/login',
      {
        config: { auth: access.public },
        schema: {
          tags,
          summary: 'Start OIDC sign-in: redirects to the identity provider',
          description:
            'return_to: the page of the web app to open after signing in (a path of this site; anything else ' +
            'opens /). 404 when OIDC is not configured, 502 when the provider cannot be reached.',
          security: [],
          querystring: Type.Object({ return_to: Type.Optional(Type.String({ maxLength: 2000 })) }),
          response: { 302: NoContent, ...errors(404, 502) },
        },
      },
      async (request, reply) => {
        const { redirectTo, flowCookie } = await deps.oidc.begin();
        const flow = {
          httpOnly: true,
          // Lax: the provider's redirect back is a top-level GET, which carries it.
          sameSite: 'lax',
          path: OIDC_FLOW_PATH,
          secure: arrivedOverHttps(request, publicUrl),
          maxAge: OIDC_FLOW_TTL_MS / 1000,
        } as const;
        reply.setCookie(OIDC_FLOW_COOKIE, flowCookie, flow);
        reply.setCookie(OIDC_RETURN_COOKIE, pageOfThisSite(request.query.return_to), flow);
        return reply.redirect(redirectTo, 302);
      },
    );

    app.get(
      '/auth/oidc/callback',
      {
        config: { auth: access.public },
        schema: {
          tags,
          summary:
            'Where the identity provider sends the browser back; starts a session and redirects to the page ' +
            'the sign-in started from (return_to), or /',
          description:
            '403 before the instance is bootstrapped, for people outside TERDUT_OIDC_ALLOWED_GROUPS, and when the ' +
            'provider refused the sign-in; 400 when no sign-in is in progress; 502 when the provider fails.',
          security: [],
          response: { 302: NoContent, ...errors(400, 403, 404, 502) },
        },
      },
      async (request, reply) => {
        const flowCookie = request.cookies[OIDC_FLOW_COOKIE];
        // The flow is single-use whatever happens next.
        reply.clearCookie(OIDC_FLOW_COOKIE, { path: OIDC_FLOW_PATH });
        const returnTo = pageOfThisSite(request.cookies[OIDC_RETURN_COOKIE]);
        reply.clearCookie(OIDC_RETURN_COOKIE, { path: OIDC_FLOW_PATH });
        // The registered redirect URI (TERDUT_PUBLIC_URL's, never the Host header) with the
        // provider's parameters: whatever spelling of the path the browser sent (absolute-form,
        // percent-encoded), the redirect_uri redeemed is the one registered, and no spelling
        // makes a URL that does not parse (a 500). Without TERDUT_PUBLIC_URL, OIDC is off (404).
        const base = (publicUrl ?? 'http://localhost').replace(/\/+$/, '');
        const queryAt = request.url.indexOf('?');
        const callbackUrl = new URL(
          `${base}${OIDC_FLOW_PATH}/callback${queryAt === -1 ? '' : request.url.slice(queryAt)}`,
        );
        const session = await deps.oidc.complete({ callbackUrl, flowCookie, clientAddress: request.ip });
        setSessionCookies(reply, request, session, publicUrl);
        return reply.redirect(returnTo, 302);
      },
    );

    app.put(
      '/api/users/:id/password',
      {
        config: { auth: access.signedIn },
        schema: {
          tags: ['users'],
          summary: "Set a password (your own, or anyone's as an admin)",
          description:
            '`current_password` is required (400 when missing, 403 when wrong) when people change their own ' +
            "existing password. The user's other sessions are revoked.",
          params: IdParams,
          body: PasswordBody,
          response: { 204: NoContent, ...errors(400, 403, 404, 429) },
        },
      },
      async (request, reply) => {
        await deps.passwords.setPassword(principalOf(request), request.params.id, {
          password: request.body.password,
          currentPassword: request.body.current_password,
          clientAddress: request.ip,
        });
        return reply.status(204).send(null);
      },
    );
  };
}
