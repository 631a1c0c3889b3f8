import type { HttpTransport } from './http.ts';
import type { BootstrapBody, Credential } from '@terdut/contract';

/** The admin and its key (`api_key.key`, shown once). */
export type BootstrapResult = Credential;
export type BootstrapAdmin = BootstrapBody;

/** The bootstrap endpoints (bootstrap-protocol.md). Authenticated by the bootstrap token, not an API key. */
export class BootstrapApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** `GET /api/bootstrap` (public). */
  async status(): Promise<{ bootstrapped: boolean }> {
    return this.#http.request('GET', '/api/bootstrap');
  }

  /**
   * `POST /api/bootstrap`: creates the first admin and its key. 201 once;
   * afterwards TerdutApiError 403 ("already bootstrapped"); 401 for a wrong token.
   *
   * @example await client.bootstrap.bootstrap(token, { username: 'terdut-operator', email: '' })
   */
  async bootstrap(bootstrapToken: string, admin: BootstrapAdmin): Promise<BootstrapResult> {
    return this.#http.request('POST', '/api/bootstrap', { token: bootstrapToken, body: admin });
  }

  /** `POST /api/bootstrap/recover`: makes `admin` an (enabled) admin again and mints it a fresh key. 401 for a wrong token. */
  async recover(bootstrapToken: string, admin: BootstrapAdmin): Promise<BootstrapResult> {
    return this.#http.request('POST', '/api/bootstrap/recover', { token: bootstrapToken, body: admin });
  }
}
