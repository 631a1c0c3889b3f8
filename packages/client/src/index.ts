/**
 * Typed client of the terdut-server API contract (api-contract.md), shared by
 * the operator, tests and tools. One module per resource; `TerdutClient`
 * composes them over one transport.
 *
 * @example
 *   const client = new TerdutClient({ baseUrl: 'http://terdut.ns.svc:8080', token: apiKey });
 *   const { user } = await client.users.me();
 */
import { HttpTransport, type HttpTransportOptions } from './http.ts';
import { BootstrapApi } from './bootstrap.ts';
import { ServiceAccountsApi } from './service-accounts.ts';
import { UsersApi } from './users.ts';

export { HttpTransport, TerdutApiError, TerdutNetworkError, isTransientError } from './http.ts';
export type { HttpTransportOptions, RequestOptions } from './http.ts';
export type { BootstrapAdmin, BootstrapResult } from './bootstrap.ts';
export type { ApiKey, ServiceAccount, User } from './types.ts';

export class TerdutClient {
  readonly http: HttpTransport;
  readonly bootstrap: BootstrapApi;
  readonly serviceAccounts: ServiceAccountsApi;
  readonly users: UsersApi;

  constructor(options: HttpTransportOptions) {
    this.http = new HttpTransport(options);
    this.bootstrap = new BootstrapApi(this.http);
    this.serviceAccounts = new ServiceAccountsApi(this.http);
    this.users = new UsersApi(this.http);
  }
}
