import type { HttpTransport } from './http.ts';

/** One alert of an Alertmanager webhook notification (version 4). */
export interface AlertmanagerAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt: string;
  /** `0001-01-01T00:00:00Z` means "not ended". */
  endsAt?: string;
  generatorURL?: string;
  fingerprint: string;
  [unknownKey: string]: unknown;
}

/** Alertmanager's webhook payload, version 4. Unknown keys are ignored by the server. */
export interface AlertmanagerNotification {
  /** The server accepts "4" only. */
  version: string;
  groupKey: string;
  truncatedAlerts?: number;
  status: 'firing' | 'resolved';
  receiver: string;
  groupLabels?: Record<string, string>;
  commonLabels?: Record<string, string>;
  commonAnnotations?: Record<string, string>;
  externalURL?: string;
  alerts: AlertmanagerAlert[];
  [unknownKey: string]: unknown;
}

/** `POST /api/webhook/alertmanager`: what Alertmanager sends; for tools, tests and benchmarks. */
export class WebhookApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** Resolves once the server has durably committed the notification. */
  async sendAlertmanager(notification: AlertmanagerNotification): Promise<void> {
    await this.#http.request('POST', '/api/webhook/alertmanager', { body: notification });
  }
}
