import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { AuditService } from './audit.ts';
import type { SessionService, StartedSession } from './sessions.ts';
import type { BootstrapGate } from './bootstrap-gate.ts';
import {
  OidcProviderError,
  OidcSignInError,
  type OidcChecks,
  type OidcIdentity,
  type OidcRelyingParty,
} from '../adapters/oidc.ts';
import { ApiError, badRequest, forbidden } from '../errors.ts';
import { requireBootstrapped } from './sign-in.ts';
import { readSignedValue, signValue } from '../auth/signed-values.ts';
import { keptInstanceSecret } from '../repositories/instance-secrets.ts';
import { findUserByUsername, insertUser, lockLiveAdminIds, setRole } from '../repositories/users.ts';
import {
  findLinkedUser,
  linkIdentity,
  lockOidcProvisioning,
  setUserEmail,
  touchIdentity,
} from '../repositories/user-identities.ts';

/** How long a browser may take between /auth/oidc/login and the callback. */
export const OIDC_FLOW_TTL_MS = 10 * 60_000;

export interface OidcPolicy {
  /** Claim holding the person's groups. */
  groupsClaim: string;
  /** When not empty, only members of these groups (or of adminGroups) may sign in. */
  allowedGroups: string[];
  /** Members are admins, everyone else a member; applied at every sign-in. Empty: roles are left alone. */
  adminGroups: string[];
}

interface FlowCookie extends OidcChecks {
  expiresAt: number;
}

const badGateway = (message: string): ApiError => new ApiError(502, message);

/**
 * Sign-in through the company's OpenID Provider: linking identities by
 * (issuer, subject), creating people on first sign-in, roles from groups.
 * Before bootstrap it refuses everyone and writes nothing (bootstrap-protocol.md).
 */
export class OidcSignInService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #sessions: SessionService;
  readonly #audit: AuditService;
  readonly #bootstrap: BootstrapGate;
  readonly #relyingParty: OidcRelyingParty | undefined;
  readonly #policy: OidcPolicy | undefined;
  readonly #key: () => Promise<string>;

  constructor(deps: {
    db: Database;
    clock: Clock;
    sessions: SessionService;
    audit: AuditService;
    bootstrap: BootstrapGate;
    relyingParty: OidcRelyingParty | undefined;
    policy: OidcPolicy | undefined;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#sessions = deps.sessions;
    this.#audit = deps.audit;
    this.#bootstrap = deps.bootstrap;
    this.#relyingParty = deps.relyingParty;
    this.#policy = deps.policy;
    this.#key = keptInstanceSecret(deps.db, 'cookie_signing');
  }

  /** Starts a sign-in: the provider URL to redirect to, and the signed flow cookie that must come back. */
  async begin(): Promise<{ redirectTo: string; flowCookie: string }> {
    const relyingParty = this.#configured();
    let started: Awaited<ReturnType<OidcRelyingParty['startSignIn']>>;
    try {
      started = await relyingParty.startSignIn();
    } catch (error) {
      throw this.#translate(error);
    }
    const flow: FlowCookie = { ...started.checks, expiresAt: this.#clock.now().getTime() + OIDC_FLOW_TTL_MS };
    return { redirectTo: started.url.toString(), flowCookie: signValue(flow, await this.#key()) };
  }

  /**
   * Completes a sign-in from the provider's redirect. Before bootstrap: 403,
   * and the code is not even redeemed. Outside the allowed groups: 403, no
   * user created. Otherwise finds or creates the user, updates email and
   * role, and starts a session.
   */
  async complete(input: {
    callbackUrl: URL;
    flowCookie: string | undefined;
    clientAddress: string;
  }): Promise<StartedSession> {
    const relyingParty = this.#configured();
    const policy = this.#policy!;
    await requireBootstrapped(this.#bootstrap);
    const checks = await this.#readFlow(input.flowCookie);

    let identity: OidcIdentity;
    try {
      identity = await relyingParty.finishSignIn(input.callbackUrl, checks);
    } catch (error) {
      throw this.#translate(error);
    }

    const allowed = [...policy.allowedGroups, ...policy.adminGroups];
    if (policy.allowedGroups.length > 0 && !identity.groups.some((group) => allowed.includes(group))) {
      await this.#db.transaction((tx) =>
        this.#audit.record(tx, {
          actor: { name: 'anonymous' },
          action: 'sign_in.failed',
          detail: {
            method: 'oidc',
            reason: 'not in an allowed group',
            subject: identity.subject,
            ...(identity.email ? { email: identity.email } : {}),
          },
          clientAddress: input.clientAddress,
        }),
      );
      throw forbidden(
        'your account at the identity provider is not in a group allowed to use terdut ' +
          `(${policy.groupsClaim} claim vs TERDUT_OIDC_ALLOWED_GROUPS); ask your administrator for access`,
      );
    }

    return this.#db.transaction(async (tx) => {
      await lockOidcProvisioning(tx);
      const user = await this.#provision(tx, identity, policy, input.clientAddress);
      const session = await this.#sessions.start(tx, user.id, 'oidc');
      await this.#audit.record(tx, {
        actor: { userId: user.id, username: user.username },
        action: 'sign_in',
        target: `user:${user.id}`,
        detail: { method: 'oidc', issuer: identity.issuer },
        clientAddress: input.clientAddress,
      });
      return session;
    });
  }

  /** Finds the user linked to the identity, or creates and links one; keeps email and role current. */
  async #provision(
    tx: Queryable,
    identity: OidcIdentity,
    policy: OidcPolicy,
    clientAddress: string,
  ): Promise<{ id: number; username: string }> {
    const now = this.#clock.now();
    const wantedRole =
      policy.adminGroups.length === 0
        ? undefined
        : identity.groups.some((group) => policy.adminGroups.includes(group))
          ? 'admin'
          : 'member';
    const linked = await findLinkedUser(tx, identity.issuer, identity.subject);
    if (linked?.deleted) {
      throw forbidden('your terdut account has been deleted; ask an administrator to restore it');
    }
    if (linked) {
      await touchIdentity(tx, identity.issuer, identity.subject, now);
      if (identity.email !== undefined && identity.email !== linked.email) {
        await setUserEmail(tx, linked.user_id, identity.email);
      }
      if (wantedRole !== undefined && wantedRole !== linked.role) {
        // The rule the API keeps (409) holds here too: leaving the admin
        // groups does not demote the last admin, which would leave the
        // instance with nobody to run it.
        if (wantedRole === 'member' && (await lockLiveAdminIds(tx)).length <= 1) {
          await this.#audit.record(tx, {
            actor: { name: 'oidc' },
            action: 'user.role_kept',
            target: `user:${linked.user_id}`,
            detail: {
              role: linked.role,
              wanted: wantedRole,
              reason: 'the last admin is not demoted; make another user admin first',
            },
            clientAddress,
          });
          return { id: linked.user_id, username: linked.username };
        }
        await setRole(tx, linked.user_id, wantedRole);
        await this.#audit.record(tx, {
          actor: { name: 'oidc' },
          action: 'user.role_changed',
          target: `user:${linked.user_id}`,
          detail: { from: linked.role, to: wantedRole, reason: 'TERDUT_OIDC_ADMIN_GROUPS' },
          clientAddress,
        });
      }
      return { id: linked.user_id, username: linked.username };
    }

    const username = await uniqueUsername(tx, usernameFrom(identity));
    const user = await insertUser(tx, {
      username,
      email: identity.email ?? '',
      role: wantedRole ?? 'member',
    });
    await linkIdentity(tx, { issuer: identity.issuer, subject: identity.subject, userId: user.id, now });
    await this.#audit.record(tx, {
      actor: { userId: user.id, username },
      action: 'user.created',
      target: `user:${user.id}`,
      detail: { via: 'oidc', issuer: identity.issuer, role: user.role },
      clientAddress,
    });
    return { id: user.id, username };
  }

  #configured(): OidcRelyingParty {
    if (!this.#relyingParty) {
      throw new ApiError(
        404,
        'OIDC sign-in is not configured on this server (TERDUT_OIDC_ISSUER_URL is not set)',
      );
    }
    return this.#relyingParty;
  }

  async #readFlow(cookie: string | undefined): Promise<OidcChecks> {
    const restart = 'start again at /auth/oidc/login';
    if (cookie === undefined) throw badRequest(`no sign-in is in progress in this browser; ${restart}`);
    const flow = readSignedValue(cookie, await this.#key()) as FlowCookie | undefined;
    if (!flow || typeof flow.state !== 'string' || typeof flow.expiresAt !== 'number') {
      throw badRequest(`the sign-in cookie is not valid; ${restart}`);
    }
    if (flow.expiresAt < this.#clock.now().getTime()) {
      throw badRequest(`the sign-in took longer than ${OIDC_FLOW_TTL_MS / 60_000} minutes; ${restart}`);
    }
    return { state: flow.state, nonce: flow.nonce, codeVerifier: flow.codeVerifier };
  }

  #translate(error: unknown): unknown {
    if (error instanceof OidcProviderError) return badGateway(error.message);
    if (error instanceof OidcSignInError) return forbidden(error.message);
    return error;
  }
}

/**
 * A username for a new person: preferred_username, else the email's local
 * part, else "user"; reduced to the characters usernames allow.
 */
export function usernameFrom(identity: Pick<OidcIdentity, 'preferredUsername' | 'email'>): string {
  const raw = identity.preferredUsername ?? identity.email?.split('@')[0] ?? 'user';
  const cleaned = raw
    .replace(/[^A-Za-z0-9._@-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 56);
  return cleaned.length > 0 ? cleaned : 'user';
}

/** `base`, or `base-2`, `base-3`, … whichever no live user holds (run under the provisioning lock). */
async function uniqueUsername(tx: Queryable, base: string): Promise<string> {
  const taken = async (name: string) => (await findUserByUsername(tx, name)) !== undefined;
  if (!(await taken(base))) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!(await taken(candidate))) return candidate;
  }
}
