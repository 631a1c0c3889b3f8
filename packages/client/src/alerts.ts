import type { HttpTransport } from './http.ts';

import type { Alert, AlertListQuery } from '@terdut/contract';

export type { Alert } from '@terdut/contract';
/** `archived: true`: only archived alerts; otherwise only non-archived ones. */
export type AlertQuery = AlertListQuery;

/** `/api/alerts` (read-only). */
export class AlertsApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** Newest first. */
  async list(query: AlertQuery = {}): Promise<Alert[]> {
    return this.#http.request('GET', '/api/alerts', {
      query: { status: query.status, archived: query.archived ? 'true' : undefined, limit: query.limit },
    });
  }

  async get(alertId: number): Promise<Alert> {
    return this.#http.request('GET', `/api/alerts/${alertId}`);
  }
}
