import type { HttpTransport } from './http.ts';
import type { ApiKey, Me, NewApiKey, User } from '@terdut/contract';

/** `/api/me` and `/api/users`. */
export class UsersApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** Who the client's credential authenticates as. */
  async me(): Promise<Me> {
    return this.#http.request('GET', '/api/me');
  }

  async list(): Promise<User[]> {
    return this.#http.request('GET', '/api/users');
  }

  async create(username: string, email: string): Promise<User> {
    return this.#http.request('POST', '/api/users', { body: { username, email } });
  }

  async delete(userId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/users/${userId}`);
  }

  async listApiKeys(userId: number): Promise<ApiKey[]> {
    return this.#http.request('GET', `/api/users/${userId}/api-keys`);
  }

  async createApiKey(userId: number, name: string): Promise<NewApiKey> {
    return this.#http.request('POST', `/api/users/${userId}/api-keys`, { body: { name } });
  }

  async deleteApiKey(userId: number, keyId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/users/${userId}/api-keys/${keyId}`);
  }
}
