import type { HttpTransport } from './http.ts';

/** An alert, one per Alertmanager fingerprint, reused across occurrences. Optional fields are omitted when absent. */
export interface Alert {
  id: number;
  fingerprint: string;
  /** The `alertname` label. */
  name: string;
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  starts_at: string;
  ends_at?: string;
  generator_url: string;
  received_at: string;
  archived_at?: string;
  /** The newest incident this alert belongs to. */
  incident_id?: number;
  /** `alertmanager`: a real resolved notification; `expiry`: the server inferred it. */
  resolution_source?: 'alertmanager' | 'expiry';
}

export interface AlertQuery {
  status?: Alert['status'];
  /** true: only archived alerts; otherwise only non-archived ones. */
  archived?: boolean;
  limit?: number;
}

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
