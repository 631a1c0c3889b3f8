import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { requireSelfOrAdmin, type Principal } from '../../auth/principal.ts';
import { badRequest, notFound, tooManyRequests } from '../../errors.ts';
import { FixedWindowRateLimiter } from '../../auth/rate-limit.ts';
import {
  deleteContactMethod,
  findContactMethod,
  insertContactMethod,
  listContactMethods,
  setContactMethodEnabled,
  type ContactMethodKind,
  type ContactMethodRow,
} from '../../repositories/contact-methods.ts';
import { findPageablePeople, type PageablePerson } from '../../repositories/paging-people.ts';
import { parseEmail, parseNtfyTopic } from '../user-fields.ts';
import type { PagingConfig } from './config.ts';
import type { PagingService } from './paging.ts';
import type { AuditService } from '../audit.ts';
import { isRefusedWebhookAddress, literalAddressOf } from './webhook-addresses.ts';

export interface ContactMethodInput {
  kind: ContactMethodKind;
  name?: string;
  /** ntfy: the topic; webhook: the URL; email: the address. */
  target: string;
  /** webhook only; generated when absent. */
  secret?: string;
  enabled?: boolean;
}

const MAX_METHODS_PER_PERSON = 20;
/** Test messages a person's methods may get in a window (`POST …/test`). */
const TESTS_PER_WINDOW = 10;
const TEST_WINDOW_MINUTES = 10;

/**
 * A person's ways of being paged: their own for members, anyone's for admins.
 * Changes are audited: a method is where that person's pages go, with the
 * Acknowledge that acts as them.
 */
export class ContactMethodService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #paging: PagingService;
  readonly #audit: AuditService;
  readonly #emailConfigured: boolean;
  readonly #linkLocalAllowed: boolean;
  /** Test messages per person (each replica counts its own). */
  readonly #testLimiter: FixedWindowRateLimiter;

  constructor(deps: {
    db: Database;
    clock: Clock;
    paging: PagingService;
    audit: AuditService;
    config: { paging: PagingConfig };
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#paging = deps.paging;
    this.#audit = deps.audit;
    this.#emailConfigured = deps.config.paging.smtp !== undefined;
    this.#linkLocalAllowed = deps.config.paging.webhookLinkLocalAllowed;
    this.#testLimiter = new FixedWindowRateLimiter({
      limit: TESTS_PER_WINDOW,
      windowMs: TEST_WINDOW_MINUTES * 60_000,
      clock: deps.clock,
    });
  }

  async list(principal: Principal, userId: number): Promise<ContactMethodRow[]> {
    requireSelfOrAdmin(principal, userId, 'read contact methods');
    await this.#person(userId);
    return listContactMethods(this.#db, userId);
  }

  /** Adds a method. A webhook without a secret gets a generated one, returned in this answer only. */
  async create(
    principal: Principal,
    userId: number,
    input: ContactMethodInput,
    clientAddress: string,
  ): Promise<ContactMethodRow> {
    requireSelfOrAdmin(principal, userId, 'add contact methods');
    await this.#person(userId);
    const name = (input.name ?? '').trim();
    if (name.length > 100) throw badRequest('field "name" must be at most 100 characters');
    let target: string;
    let secret: string | null = null;
    if (input.kind === 'ntfy') {
      const topic = parseNtfyTopic(input.target, 'target');
      if (topic === null) throw badRequest('field "target" must be an ntfy topic');
      target = topic;
      if (input.secret !== undefined) throw badRequest('field "secret" is only for webhook methods');
    } else if (input.kind === 'email') {
      if (!this.#emailConfigured) {
        throw badRequest(
          'field "kind": email is not configured on this server; an admin sets TERDUT_SMTP_URL',
        );
      }
      if (input.secret !== undefined) throw badRequest('field "secret" is only for webhook methods');
      target = parseEmail(input.target, 'target');
    } else {
      target = webhookUrl(input.target, this.#linkLocalAllowed);
      secret = input.secret ?? randomBytes(32).toString('hex');
      if (secret.length < 16) throw badRequest('field "secret" must be at least 16 characters');
    }
    if ((await listContactMethods(this.#db, userId)).length >= MAX_METHODS_PER_PERSON) {
      throw badRequest(
        `a person may have at most ${MAX_METHODS_PER_PERSON} contact methods; delete one first`,
      );
    }
    return this.#db.transaction(async (tx) => {
      const method = await insertContactMethod(
        tx,
        { user_id: userId, kind: input.kind, name, target, secret, enabled: input.enabled ?? true },
        this.#clock.now(),
      );
      await this.#record(tx, principal, 'contact_method.created', method, clientAddress);
      return method;
    });
  }

  /** Switches a method on or off (a method that is off is not paged). */
  async setEnabled(
    principal: Principal,
    userId: number,
    id: number,
    enabled: boolean,
    clientAddress: string,
  ): Promise<ContactMethodRow> {
    requireSelfOrAdmin(principal, userId, 'change contact methods');
    return this.#db.transaction(async (tx) => {
      const method = await setContactMethodEnabled(tx, userId, id, enabled);
      if (method === undefined) throw notFound(`contact method ${id} of user ${userId}`);
      const action = enabled ? 'contact_method.enabled' : 'contact_method.disabled';
      await this.#record(tx, principal, action, method, clientAddress);
      return method;
    });
  }

  async delete(principal: Principal, userId: number, id: number, clientAddress: string): Promise<void> {
    requireSelfOrAdmin(principal, userId, 'delete contact methods');
    await this.#db.transaction(async (tx) => {
      const method = await findContactMethod(tx, userId, id);
      if (method === undefined || !(await deleteContactMethod(tx, userId, id)))
        throw notFound(`contact method ${id} of user ${userId}`);
      await this.#record(tx, principal, 'contact_method.deleted', method, clientAddress);
    });
  }

  /** Sends a test message now and reports what the provider answered. */
  async test(
    principal: Principal,
    userId: number,
    id: number,
  ): Promise<{ delivered: boolean; answer: string; message_id?: string }> {
    requireSelfOrAdmin(principal, userId, 'test contact methods');
    const person = await this.#person(userId);
    const method = await findContactMethod(this.#db, userId, id);
    if (method === undefined) throw notFound(`contact method ${id} of user ${userId}`);
    // A test goes to any address the person typed, unverified: without a bound a member could
    // send mail or pages to anyone at the server's expense (and its ntfy token's).
    const allowed = this.#testLimiter.hit(String(userId));
    if (!allowed.allowed) {
      throw tooManyRequests(
        `at most ${TESTS_PER_WINDOW} test messages per person every ${TEST_WINDOW_MINUTES} minutes; try again in ${allowed.retryAfterSeconds} s`,
        allowed.retryAfterSeconds,
      );
    }
    return this.#paging.sendTest(person, method);
  }

  /** Who, whose and which kind; never the target (an ntfy topic is itself a credential) or the secret. */
  async #record(
    tx: Queryable,
    principal: Principal,
    action: string,
    method: ContactMethodRow,
    clientAddress: string,
  ): Promise<void> {
    await this.#audit.record(tx, {
      actor: principal,
      action,
      target: `contact_method:${method.id}`,
      detail: { user_id: method.user_id, kind: method.kind, name: method.name },
      clientAddress,
    });
  }

  async #person(userId: number): Promise<PageablePerson> {
    const [person] = await findPageablePeople(this.#db, [userId]);
    if (person === undefined) throw notFound(`user ${userId}`);
    return person;
  }
}

function webhookUrl(text: string, linkLocalAllowed: boolean): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw badRequest('field "target" must be the webhook\'s absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw badRequest('field "target" must be an http(s) URL');
  }
  if (url.username !== '' || url.password !== '') {
    throw badRequest('field "target" must not carry credentials; the signature authenticates terdut');
  }
  const literal = literalAddressOf(url);
  if (!linkLocalAllowed && literal !== undefined && isRefusedWebhookAddress(literal)) {
    throw badRequest(
      `field "target": ${literal} is a link-local or cloud metadata address, where terdut sends no webhooks ` +
        '(an admin may allow them with TERDUT_WEBHOOK_ALLOW_LINK_LOCAL=true)',
    );
  }
  return url.toString();
}
