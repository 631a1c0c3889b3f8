import type { HttpTransport } from './http.ts';
import type { ApiKey, NewApiKey, NewServiceAccount, ServiceAccount } from '@terdut/contract';

/** `/api/service-accounts` (admin only). */
export class ServiceAccountsApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** Creates the account and its first key; TerdutApiError 409 when the name exists. */
  async create(name: string, scope: ServiceAccount['scope'] = 'instance'): Promise<NewServiceAccount> {
    return this.#http.request('POST', '/api/service-accounts', { body: { name, scope } });
  }

  /** The account called `name`, if any. */
  async findByName(name: string): Promise<ServiceAccount | undefined> {
    const accounts = await this.#http.request<ServiceAccount[]>('GET', '/api/service-accounts', {
      query: { name },
    });
    return accounts.find((account) => account.name === name);
  }

  async list(): Promise<ServiceAccount[]> {
    return this.#http.request('GET', '/api/service-accounts');
  }

  /** Mints a new key; the answer carries `key` once. */
  async createKey(serviceAccountId: number, name: string): Promise<NewApiKey> {
    return this.#http.request('POST', `/api/service-accounts/${serviceAccountId}/keys`, { body: { name } });
  }

  /** The account's keys, newest first, without `key`: finds keys nobody recorded so they can be revoked. */
  async listKeys(serviceAccountId: number): Promise<ApiKey[]> {
    return this.#http.request('GET', `/api/service-accounts/${serviceAccountId}/keys`);
  }

  async revokeKey(serviceAccountId: number, keyId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/service-accounts/${serviceAccountId}/keys/${keyId}`);
  }

  async delete(serviceAccountId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/service-accounts/${serviceAccountId}`);
  }
}
