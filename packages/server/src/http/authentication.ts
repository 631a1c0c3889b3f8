import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { AuthenticationService } from '../services/authentication.ts';
import { unauthorized } from '../errors.ts';
import { SESSION_COOKIE } from './session-cookies.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for every authenticated request; null on public routes without credentials. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The contract marks this `/api/*` route public: no API key or session needed. */
    public?: boolean;
  }
}

/**
 * Authenticates every `/api/*` request before its body is parsed, so an
 * anonymous caller gets 401, never a validation error. Routes outside `/api`
 * (health, metrics, sign-in) and routes marked `config.public` pass without
 * credentials; credentials they do carry are still resolved.
 */
export function installAuthentication(app: FastifyInstance, authentication: AuthenticationService): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    request.principal = await resolvePrincipal(request, authentication);
    const protectedRoute = request.url.startsWith('/api/') && request.routeOptions.config.public !== true;
    if (protectedRoute && request.principal === null) {
      throw unauthorized(
        request.headers.authorization
          ? 'invalid API key'
          : 'authentication required: send Authorization: Bearer <api key>, or sign in at /auth/login',
      );
    }
  });
}

async function resolvePrincipal(
  request: FastifyRequest,
  authentication: AuthenticationService,
): Promise<Principal | null> {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return null;
    return (await authentication.authenticateApiKey(match[1]!)) ?? null;
  }
  const sessionCookie = request.cookies[SESSION_COOKIE];
  if (sessionCookie === undefined) return null;
  return (await authentication.authenticateSession(sessionCookie)) ?? null;
}

/** The caller of an authenticated route. Throws 401 if, against expectation, there is none. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw unauthorized();
  return request.principal;
}
