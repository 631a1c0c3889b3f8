import type { WebhookAccepted, WebhookAlert, WebhookPayload } from '@terdut/contract';
import type { HttpTransport } from './http.ts';

/**
 * One alert of an Alertmanager webhook notification (version 4), as the
 * contract's schema has it; `endsAt` `0001-01-01T00:00:00Z` means "not ended".
 * Unknown keys are allowed and ignored by the server.
 */
export type AlertmanagerAlert = WebhookAlert & { [unknownKey: string]: unknown };

/** Alertmanager's webhook payload, version 4 (the server accepts "4" only). Unknown keys are ignored. */
export type AlertmanagerNotification = Omit<WebhookPayload, 'alerts'> & {
  alerts: AlertmanagerAlert[];
  [unknownKey: string]: unknown;
};

/** `POST /api/webhook/alertmanager`: what Alertmanager sends; for tools, tests and benchmarks. */
export class WebhookApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /**
   * Resolves once the server has durably committed the notification, with its answer: the
   * group's open incident afterwards (`incident_id`, absent when none is open).
   */
  async sendAlertmanager(notification: AlertmanagerNotification): Promise<WebhookAccepted> {
    return this.#http.request('POST', '/api/webhook/alertmanager', { body: notification });
  }
}
