import type { Database, Queryable } from '../db/database.ts';
import type { Principal } from '../auth/principal.ts';
import { requireSelfOrAdmin } from '../auth/principal.ts';
import { generateApiKey, hashApiKey } from '../auth/secrets.ts';
import { notFound } from '../errors.ts';
import { deleteKey, insertKey, listKeysOfUser, type ApiKeyRow } from '../repositories/api-keys.ts';
import { findPersonById, lockLivePerson } from '../repositories/users.ts';
import type { AuditService } from './audit.ts';
import type { CredentialsChanged } from './api-key-cache.ts';
import { parseKeyName } from './user-fields.ts';

/** A key as just created: the only time the secret itself exists outside the caller's hands. */
export interface NewApiKey extends ApiKeyRow {
  key: string;
}

/**
 * Mints a key for `userId` in `tx`: 32 random bytes, stored as a SHA-256 hash.
 * Shared by API keys, service accounts and bootstrap, so every key is made the same way.
 */
export async function mintApiKey(tx: Queryable, userId: number, name: string): Promise<NewApiKey> {
  const key = generateApiKey();
  const row = await insertKey(tx, userId, name, hashApiKey(key));
  return { ...row, key };
}

/** People's API keys: members manage their own, admins anyone's. */
export class ApiKeyService {
  readonly #db: Database;
  readonly #audit: AuditService;
  readonly #credentialsChanged: CredentialsChanged;

  constructor(deps: { db: Database; audit: AuditService; credentialsChanged: CredentialsChanged }) {
    this.#db = deps.db;
    this.#audit = deps.audit;
    this.#credentialsChanged = deps.credentialsChanged;
  }

  /** The keys of a person, newest first, without secrets. */
  async list(principal: Principal, userId: number): Promise<ApiKeyRow[]> {
    requireSelfOrAdmin(principal, userId, 'list API keys');
    if (!(await findPersonById(this.#db, userId))) throw notFound(`user ${userId}`);
    return listKeysOfUser(this.#db, userId);
  }

  /** Creates a key; the answer carries the key, which is never shown again. */
  async create(
    principal: Principal,
    userId: number,
    nameText: string,
    clientAddress: string,
  ): Promise<NewApiKey> {
    requireSelfOrAdmin(principal, userId, 'create API keys');
    const name = parseKeyName(nameText);
    return this.#db.transaction(async (tx) => {
      // Locked: a key minted while the person is being deleted would survive the deletion's
      // sweep of their keys, and a later recovery of the person would bring it back.
      if (!(await lockLivePerson(tx, userId))) throw notFound(`user ${userId}`);
      const created = await mintApiKey(tx, userId, name);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'api_key.created',
        target: `api_key:${created.id}`,
        detail: { user_id: userId, name },
        clientAddress,
      });
      return created;
    });
  }

  /** Deletes one key of a person; 404 when that person has no such key. */
  async delete(principal: Principal, userId: number, keyId: number, clientAddress: string): Promise<void> {
    requireSelfOrAdmin(principal, userId, 'delete API keys');
    await this.#db.transaction(async (tx) => {
      if (!(await findPersonById(tx, userId))) throw notFound(`user ${userId}`);
      if (!(await deleteKey(tx, userId, keyId))) throw notFound(`API key ${keyId} of user ${userId}`);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'api_key.deleted',
        target: `api_key:${keyId}`,
        detail: { user_id: userId },
        clientAddress,
      });
    });
    this.#credentialsChanged();
  }
}
