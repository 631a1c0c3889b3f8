import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { AuthenticationService } from '../services/authentication.ts';
import type { BootstrapService } from '../services/bootstrap.ts';
import type { Capability, CapabilityService } from '../services/capabilities.ts';
import { ApiError, forbidden, unauthorized } from '../errors.ts';
import { secretsEqual } from '../auth/secrets.ts';
import { SESSION_COOKIE } from './session-cookies.ts';
import { securityOf, withAuthStatuses, type RouteAuth } from './route-auth.ts';
import { routeMethods, type RouteMethods } from './allowed-methods.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, on routes whose declaration asks for one; null elsewhere. */
    principal: Principal | null;
    /** The verified capability, on routes declared `capability`; null elsewhere. */
    capability: Capability | null;
  }
  interface FastifyInstance {
    /** Every route as registered, with its declaration: what the router-driven tests enumerate. */
    declaredRoutes: DeclaredRoute[];
    /** The methods the routes serve at each concrete path, for 405 answers (http/allowed-methods.ts). */
    routeMethods: RouteMethods;
  }
  interface FastifyContextConfig {
    /** Who may call this route (http/route-auth.ts). Required: a route without it is refused at start-up. */
    auth?: RouteAuth;
  }
}

/** A 405 for `method` at `path`, with the `Allow` header RFC 9110 requires. */
export function methodNotAllowed(
  reply: { header(name: string, value: string): unknown },
  method: string,
  path: string,
  allowed: readonly string[],
): ApiError {
  reply.header('allow', allowed.join(', '));
  return new ApiError(405, `method ${method} is not allowed on ${path}; use ${allowed.join(', ')}`);
}

export interface DeclaredRoute {
  method: string;
  url: string;
  auth: RouteAuth;
}

/**
 * The methods some route answers, collected as routes register (so a new
 * PATCH route needs no list kept by hand); anything else (TRACE, CONNECT, …)
 * is 405 on every path.
 */
const ALWAYS_SERVED_METHODS = ['HEAD', 'OPTIONS'];

export interface AuthenticationDeps {
  authentication: AuthenticationService;
  bootstrap: BootstrapService;
  capabilities: CapabilityService;
  /** TERDUT_METRICS_TOKEN; undefined leaves /metrics public. */
  metricsToken: string | undefined;
}

/**
 * Enforces each route's declared authentication (http/route-auth.ts) before
 * its body is parsed, so an anonymous caller gets 401, never a validation
 * error. The declaration is read from the route the router matched, so no
 * spelling of the URL (percent-encoding, absolute form) changes the outcome.
 * A path no route matches is treated as protected: anonymous callers get 401
 * there too and learn nothing about which paths exist.
 *
 * Also refuses at start-up any route that declares nothing, and adds the
 * declaration's `security` and 401/403 answers to the route's OpenAPI entry.
 * Must be installed before the routes and before @fastify/swagger.
 */
export function installAuthentication(app: FastifyInstance, deps: AuthenticationDeps): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('capability', null);
  const declaredRoutes: DeclaredRoute[] = [];
  app.decorate('declaredRoutes', declaredRoutes);
  const servedMethods = new Set(ALWAYS_SERVED_METHODS);
  const methods = routeMethods(declaredRoutes);
  app.decorate('routeMethods', methods);

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (auth === undefined) {
      throw new Error(
        `route ${String(route.method)} ${route.url} declares no authentication; add config: { auth: access.… } ` +
          '(packages/server/src/http/route-auth.ts)',
      );
    }
    for (const method of ([] as string[]).concat(route.method)) {
      declaredRoutes.push({ method, url: route.url, auth });
      servedMethods.add(method);
    }
    if (route.schema !== undefined) {
      route.schema = {
        ...route.schema,
        security: securityOf(auth),
        response: withAuthStatuses(route.schema.response as Record<string, unknown> | undefined, auth),
      };
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) {
      if (!servedMethods.has(request.method)) {
        const allowed = [...servedMethods].join(', ');
        reply.header('allow', allowed);
        throw new ApiError(405, `method ${request.method} is not allowed; use one of ${allowed}`);
      }
      // A path some route serves, with another method: 405 naming the ones
      // it has (RFC 9110 §15.5.6), to those who may know the path exists.
      const path = request.url.split('?')[0]!;
      const served = methods.otherMethodsAt(path, request.method);
      if (served.methods.length > 0 && served.anyPublic)
        throw methodNotAllowed(reply, request.method, path, served.methods);
      // Deny by default: only signed-in callers hear "no route".
      request.principal = await principalFrom(request, deps.authentication, ['api_key', 'session']);
      if (request.principal === null) throw unauthorized(credentialAdvice(request));
      if (served.methods.length > 0) throw methodNotAllowed(reply, request.method, path, served.methods);
      return;
    }
    const auth = request.routeOptions.config.auth;
    if (auth === undefined) throw unauthorized(); // unreachable: onRoute refuses such routes
    switch (auth.kind) {
      case 'public':
        return;
      case 'metrics_token':
        if (deps.metricsToken !== undefined && !bearerEquals(request, deps.metricsToken)) {
          throw unauthorized('metrics token required: send Authorization: Bearer <TERDUT_METRICS_TOKEN>');
        }
        return;
      case 'bootstrap_token':
        await deps.bootstrap.admit(request.headers.authorization, request.ip, auth.endpoint);
        return;
      case 'capability': {
        const token = bearerOf(request);
        const capability =
          token === undefined ? undefined : await deps.capabilities.verify(token, auth.action);
        if (capability === undefined) {
          throw unauthorized(
            'a valid, unexpired link is required for this action; open the latest page again',
          );
        }
        const params = request.params as Record<string, string | undefined>;
        if (params[auth.incidentParam] !== String(capability.incidentId)) {
          throw forbidden('this link is for another incident');
        }
        request.capability = capability;
        return;
      }
      case 'principal': {
        const principal = await principalFrom(request, deps.authentication, auth.via);
        if (principal === null) {
          if (auth.optional) return;
          // A browser's session on a route for programs: the contract's 403,
          // saying what the route takes (the session itself is not consulted).
          if (
            !auth.via.includes('session') &&
            request.headers.authorization === undefined &&
            request.cookies[SESSION_COOKIE] !== undefined
          ) {
            throw forbidden(
              'this route takes API keys only, not a session; send Authorization: Bearer <api key>',
            );
          }
          throw unauthorized(credentialAdvice(request));
        }
        if (!auth.via.includes(principal.via)) {
          throw forbidden(
            `this route accepts ${auth.via.map((via) => via.replace('_', ' ')).join(' or ')} only; ` +
              `send Authorization: Bearer <api key>`,
          );
        }
        if (auth.role === 'admin' && principal.role !== 'admin') {
          throw forbidden(`only admins may ${request.method} ${request.routeOptions.url ?? 'this route'}`);
        }
        request.principal = principal;
        return;
      }
    }
  });

  // After the caller is admitted: a parametric route that caught a static
  // path (DELETE /api/schedule/current reached /api/schedule/:id, which would
  // call "current" a bad id) is a method that path's resource does not have.
  app.addHook('onRequest', async (request, reply) => {
    const routeUrl = request.routeOptions.url;
    if (request.is404 || routeUrl === undefined || !routeUrl.includes(':')) return;
    const path = request.url.split('?')[0]!;
    if (!methods.isStaticPath(path)) return;
    const served = methods.otherMethodsAt(path, request.method);
    if (served.methods.length > 0) throw methodNotAllowed(reply, request.method, path, served.methods);
  });
}

function credentialAdvice(request: FastifyRequest): string {
  const authorization = request.headers.authorization;
  if (!authorization) {
    return 'authentication required: send Authorization: Bearer <api key>, or sign in at /auth/login';
  }
  // Another scheme (Alertmanager's basic_auth sends Basic) is not a wrong key: say what to send.
  const scheme = /^(\S+)\s/.exec(authorization)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== 'bearer') {
    return (
      `${scheme.slice(0, 20)} authentication is not accepted; send Authorization: Bearer <api key> ` +
      '(in Alertmanager: http_config.authorization, not basic_auth)'
    );
  }
  return 'invalid API key';
}

/**
 * The principal behind the request's API key or session cookie. An
 * Authorization header wins over a cookie. A session is resolved only where
 * the route accepts sessions, so a route for programs never consults one;
 * an API key is always resolved, so a key on a session-only route is refused
 * by kind (403) rather than as missing (401).
 */
async function principalFrom(
  request: FastifyRequest,
  authentication: AuthenticationService,
  via: readonly ('api_key' | 'session')[],
): Promise<Principal | null> {
  if (request.headers.authorization !== undefined) {
    const key = bearerOf(request);
    if (key === undefined) return null;
    return (await authentication.authenticateApiKey(key)) ?? null;
  }
  const sessionCookie = request.cookies[SESSION_COOKIE];
  if (sessionCookie === undefined || !via.includes('session')) return null;
  return (await authentication.authenticateSession(sessionCookie)) ?? null;
}

function bearerOf(request: FastifyRequest): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
}

function bearerEquals(request: FastifyRequest, expected: string): boolean {
  const given = bearerOf(request);
  return given !== undefined && secretsEqual(given, expected);
}

/** The caller of a route declared `principal` (not optional). The hook guarantees one; 401 guards a mis-declared route. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw unauthorized();
  return request.principal;
}

/** The verified capability of a route declared `capability`. */
export function capabilityOf(request: FastifyRequest): Capability {
  if (request.capability === null) throw unauthorized();
  return request.capability;
}
