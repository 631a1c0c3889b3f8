import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Principal } from '../auth/principal.ts';
import { requireAdmin } from '../auth/principal.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import { deleteKey, deleteKeysOfUser, listKeysOfUser, type ApiKeyRow } from '../repositories/api-keys.ts';
import { insertUser, softDeleteUser } from '../repositories/users.ts';
import {
  deleteServiceAccount,
  findServiceAccountById,
  findServiceAccountByName,
  insertServiceAccount,
  listServiceAccounts,
  type ServiceAccountRow,
} from '../repositories/service-accounts.ts';
import type { AuditService } from './audit.ts';
import type { CredentialsChanged } from './api-key-cache.ts';
import { mintApiKey, type NewApiKey } from './api-keys.ts';
import { parseKeyName } from './user-fields.ts';

// Kubernetes-style names (the operator names its account after the
// TerdutServer), plus "." and "_"; no ":" or "/" so `service:NAME` stays readable.
const SERVICE_ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The username of the user row behind a service account; ":" keeps it out of people's namespace. */
export function serviceAccountUsername(name: string): string {
  return `service:${name}`;
}

/**
 * Service accounts: non-person users that act through API keys only (the
 * operator's credential). Scope `instance` acts as an admin. Admins only.
 */
export class ServiceAccountService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #credentialsChanged: CredentialsChanged;

  constructor(deps: {
    db: Database;
    clock: Clock;
    audit: AuditService;
    credentialsChanged: CredentialsChanged;
  }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#audit = deps.audit;
    this.#credentialsChanged = deps.credentialsChanged;
  }

  /** Creates the account, its user and a first key in one transaction; 409 when the name exists. */
  async create(
    principal: Principal,
    input: { name: string; scope: 'instance' },
    clientAddress: string,
  ): Promise<{ account: ServiceAccountRow; key: NewApiKey }> {
    requireAdmin(principal, 'manage service accounts');
    const name = input.name.trim();
    if (!SERVICE_ACCOUNT_NAME.test(name)) {
      throw badRequest(
        'field "name" must be 1-100 characters: letters, digits, ".", "_" or "-", starting with a letter or digit',
      );
    }
    const taken = () =>
      conflict(`service account "${name}" exists; look it up with GET /api/service-accounts?name=`);
    try {
      return await this.#db.transaction(async (tx) => {
        if (await findServiceAccountByName(tx, name)) throw taken();
        // Service accounts act as admins through their scope; the row's role says the same.
        const user = await insertUser(tx, {
          username: serviceAccountUsername(name),
          email: '',
          role: 'admin',
          kind: 'service',
        });
        const account = await insertServiceAccount(tx, { userId: user.id, name, scope: input.scope });
        const key = await mintApiKey(tx, user.id, 'initial');
        await this.#audit.record(tx, {
          actor: principal,
          action: 'service_account.created',
          target: `service_account:${account.id}`,
          detail: { name, scope: input.scope, api_key_id: key.id },
          clientAddress,
        });
        return { account, key };
      });
    } catch (error) {
      // Two concurrent creates: the loser hits the unique constraint.
      if (isUniqueViolation(error)) throw taken();
      throw error;
    }
  }

  /** All service accounts, or the one with exactly this name (empty list when none), newest first. */
  async list(principal: Principal, filter: { name?: string }): Promise<ServiceAccountRow[]> {
    requireAdmin(principal, 'manage service accounts');
    return listServiceAccounts(this.#db, filter.name);
  }

  /**
   * The account's keys, newest first, without secrets; 404 for an unknown
   * account. Lets whoever adopts an account find keys nobody recorded (an
   * operator that crashed between minting a key and storing it) and revoke them.
   */
  async listKeys(principal: Principal, id: number): Promise<ApiKeyRow[]> {
    requireAdmin(principal, 'manage service accounts');
    const account = await this.#find(this.#db, id);
    return listKeysOfUser(this.#db, account.user_id);
  }

  /** Mints another key for the account (rotation, or adopting an account after a crash). */
  async createKey(
    principal: Principal,
    id: number,
    nameText: string,
    clientAddress: string,
  ): Promise<NewApiKey> {
    requireAdmin(principal, 'manage service accounts');
    const name = parseKeyName(nameText);
    return this.#db.transaction(async (tx) => {
      const account = await this.#find(tx, id);
      const key = await mintApiKey(tx, account.user_id, name);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'service_account.key_created',
        target: `api_key:${key.id}`,
        detail: { service_account_id: id, service_account: account.name, name },
        clientAddress,
      });
      return key;
    });
  }

  /** Revokes one key of the account; 404 when the account has no such key. */
  async deleteKey(principal: Principal, id: number, keyId: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'manage service accounts');
    await this.#db.transaction(async (tx) => {
      const account = await this.#find(tx, id);
      if (!(await deleteKey(tx, account.user_id, keyId))) {
        throw notFound(`API key ${keyId} of service account ${id}`);
      }
      await this.#audit.record(tx, {
        actor: principal,
        action: 'service_account.key_deleted',
        target: `api_key:${keyId}`,
        detail: { service_account_id: id, service_account: account.name },
        clientAddress,
      });
    });
    this.#credentialsChanged();
  }

  /** Deletes the account and all its keys; its user row stays (soft-deleted) for the timelines. */
  async delete(principal: Principal, id: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'manage service accounts');
    await this.#db.transaction(async (tx) => {
      const account = await this.#find(tx, id);
      const keys = await deleteKeysOfUser(tx, account.user_id);
      await softDeleteUser(tx, account.user_id, this.#clock.now());
      await deleteServiceAccount(tx, id);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'service_account.deleted',
        target: `service_account:${id}`,
        detail: { name: account.name, api_keys_deleted: keys },
        clientAddress,
      });
    });
    this.#credentialsChanged();
  }

  async #find(tx: Queryable, id: number): Promise<ServiceAccountRow> {
    const account = await findServiceAccountById(tx, id);
    if (!account) throw notFound(`service account ${id}`);
    return account;
  }
}
