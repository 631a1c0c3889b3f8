import type { FastifySchema } from 'fastify';
import { ErrorSchema } from '@terdut/contract';

/**
 * What a route accepts as its caller, declared in the route's own definition
 * (`config: { auth: access.admin }`) and enforced by installAuthentication,
 * which reads the declaration of the route the router MATCHED, never the URL
 * text: `/%61pi/users`, `GET http://x/api/users` and `/api/users` are one
 * route with one declaration. A route that declares nothing is refused when
 * it is registered, so forgetting is a start-up failure, not an open door.
 *
 * - `public`: no credentials; the handler gets no principal. `sameOrigin`
 *   refuses a cross-site browser Origin (sign-in forms: no login CSRF).
 * - `principal`: an API key and/or a browser session (`via`), optionally of
 *   an admin (`role`). Cookie-authenticated state-changing requests need
 *   the CSRF token (http/csrf.ts). `optional`: anonymous callers pass with no
 *   principal (sign-out, which must work for an expired session too).
 * - `bootstrap_token`: the instance's bootstrap token (bootstrap-protocol.md).
 * - `metrics_token`: TERDUT_METRICS_TOKEN when it is set, else public.
 * - `capability`: a signed token bound to one incident, one person and one
 *   action, with an expiry (services/capabilities.ts). The paging work will
 *   declare e.g. `access.capability('incident.acknowledge', 'id')` on a route
 *   such as `POST /api/incidents/:id/acknowledge-by-link`; the token arrives as
 *   `Authorization: Bearer <capability>`, the hook verifies signature, expiry
 *   and action, compares its incident with the route's `:id` parameter (403
 *   when it differs), and the handler reads `capabilityOf(request)` for the
 *   person to act as. No route uses it yet.
 */
export type RouteAuth =
  | { readonly kind: 'public'; readonly sameOrigin?: boolean }
  | {
      readonly kind: 'principal';
      readonly via: readonly CredentialKind[];
      readonly role?: 'admin';
      readonly optional?: boolean;
    }
  | { readonly kind: 'bootstrap_token'; readonly endpoint: 'bootstrap' | 'recover' }
  | { readonly kind: 'metrics_token' }
  | { readonly kind: 'capability'; readonly action: CapabilityAction; readonly incidentParam: string };

export type CredentialKind = 'api_key' | 'session';

/** What a capability token may do; one per paging action. */
export type CapabilityAction = 'incident.acknowledge' | 'incident.resolve';

/** The declarations routes use; `config: { auth: access.signedIn }`. */
export const access = {
  /** Anyone, no credentials (health, bootstrap status, OpenAPI, OIDC redirects). */
  public: { kind: 'public' },
  /** Anyone, but a browser must be on our own origin (password sign-in). */
  publicSameOrigin: { kind: 'public', sameOrigin: true },
  /** Any signed-in person or service account, by API key or session. */
  signedIn: { kind: 'principal', via: ['api_key', 'session'] },
  /** Admins (and instance service accounts), by API key or session. */
  admin: { kind: 'principal', via: ['api_key', 'session'], role: 'admin' },
  /** Programs only (Alertmanager): a session is refused with 403. */
  apiKey: { kind: 'principal', via: ['api_key'] },
  /**
   * Anyone, with the caller resolved when credentials came along: the web
   * app's page fallback, which must serve anonymous visitors the app but
   * answer an API-looking path as an unmatched protected one (401 / 404).
   */
  signedInIfAny: { kind: 'principal', via: ['api_key', 'session'], optional: true },
  /** A session when there is one (sign-out); anonymous passes. */
  sessionIfAny: { kind: 'principal', via: ['session'], optional: true },
  /** The metrics scraper's token when TERDUT_METRICS_TOKEN is set. */
  metricsToken: { kind: 'metrics_token' },
  bootstrapToken: (endpoint: 'bootstrap' | 'recover'): RouteAuth => ({ kind: 'bootstrap_token', endpoint }),
  capability: (action: CapabilityAction, incidentParam = 'id'): RouteAuth => ({
    kind: 'capability',
    action,
    incidentParam,
  }),
} as const satisfies Record<string, RouteAuth | ((...args: never[]) => RouteAuth)>;

/** True when anonymous callers reach the handler (the router-driven test skips these). */
export function isPublic(auth: RouteAuth, metricsTokenSet: boolean): boolean {
  if (auth.kind === 'public') return true;
  if (auth.kind === 'metrics_token') return !metricsTokenSet;
  return auth.kind === 'principal' && auth.optional === true;
}

/** The OpenAPI `security` requirement of a declaration. */
export function securityOf(auth: RouteAuth): Array<Record<string, string[]>> {
  switch (auth.kind) {
    case 'public':
      return [];
    case 'principal':
      return [
        ...(auth.optional ? [{}] : []),
        ...auth.via.map((via): Record<string, string[]> => ({
          [via === 'api_key' ? 'apiKey' : 'session']: [],
        })),
      ];
    case 'bootstrap_token':
      return [{ bootstrapToken: [] }];
    case 'metrics_token':
      return [{ metricsToken: [] }];
    case 'capability':
      return [{ capabilityToken: [] }];
  }
}

/**
 * The statuses a declaration can answer before the handler runs, added to the
 * route's response map so the OpenAPI document tells the truth about
 * authentication: 401 wherever credentials are checked, 403 where a role or a
 * credential kind can be refused.
 */
export function authStatuses(auth: RouteAuth): number[] {
  switch (auth.kind) {
    case 'public':
      return auth.sameOrigin ? [403] : [];
    case 'principal': {
      const statuses = auth.optional ? [] : [401];
      // Sessions bring CSRF refusals; a role or a missing credential kind, refusals by kind.
      if (auth.via.includes('session') || auth.role !== undefined || auth.via.length < 2) statuses.push(403);
      return statuses;
    }
    case 'bootstrap_token':
    case 'metrics_token':
      return [401];
    case 'capability':
      return [401, 403];
  }
}

/** `response` with an error schema for each status the declaration adds and the route did not declare. */
export function withAuthStatuses(
  response: Record<string, unknown> | undefined,
  auth: RouteAuth,
): Record<string, unknown> | undefined {
  return withErrorStatuses(response, authStatuses(auth));
}

/**
 * `response` with the Error schema for each of `statuses` it does not
 * declare: what a hook answers before the handler runs (authentication,
 * validation, the id check) belongs in the route's OpenAPI entry too.
 */
export function withErrorStatuses(
  response: Record<string, unknown> | undefined,
  statuses: readonly number[],
): Record<string, unknown> | undefined {
  const missing = statuses.filter((status) => response?.[String(status)] === undefined);
  if (missing.length === 0) return response;
  return { ...response, ...Object.fromEntries(missing.map((status) => [String(status), ErrorSchema])) };
}

/**
 * Adds to `route` (as an `onRoute` hook receives it) the Error schema for
 * each of `statuses` it does not declare, for the hooks that can answer
 * before its handler (validation, the id check, body parsing).
 */
export function declareErrorStatuses(route: { schema?: FastifySchema }, statuses: readonly number[]): void {
  if (route.schema === undefined) return;
  route.schema = {
    ...route.schema,
    response: withErrorStatuses(route.schema.response as Record<string, unknown> | undefined, statuses),
  };
}
