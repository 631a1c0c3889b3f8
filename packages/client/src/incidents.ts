import type { HttpTransport } from './http.ts';
import type { Incident, IncidentEvent, IncidentListQuery } from '@terdut/contract';

export type { Incident, IncidentEvent } from '@terdut/contract';
/** `archived` and `snoozed` switch the list to those incidents instead of the default set. */
export type IncidentQuery = IncidentListQuery;

/** `/api/incidents` and the actions on one incident. */
export class IncidentsApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /** Newest first; by default open, not archived, not currently snoozed. */
  async list(query: IncidentQuery = {}): Promise<Incident[]> {
    return this.#http.request('GET', '/api/incidents', {
      query: {
        status: query.status,
        archived: query.archived ? 'true' : undefined,
        snoozed: query.snoozed ? 'true' : undefined,
        limit: query.limit,
      },
    });
  }

  /** The incident with its `alerts` inline. */
  async get(incidentId: number): Promise<Incident> {
    return this.#http.request('GET', `/api/incidents/${incidentId}`);
  }

  /** Oldest first. */
  async timeline(incidentId: number): Promise<IncidentEvent[]> {
    return this.#http.request('GET', `/api/incidents/${incidentId}/timeline`);
  }

  async acknowledge(incidentId: number): Promise<Incident> {
    return this.#http.request('POST', `/api/incidents/${incidentId}/acknowledge`);
  }

  async unacknowledge(incidentId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/incidents/${incidentId}/acknowledge`);
  }

  async assign(incidentId: number, userId: number): Promise<Incident> {
    return this.#http.request('POST', `/api/incidents/${incidentId}/assign`, { body: { user_id: userId } });
  }

  /** `duration` is Go-style: `30m`, `2h`, `1h30m`. */
  async snooze(incidentId: number, duration: string): Promise<Incident> {
    return this.#http.request('POST', `/api/incidents/${incidentId}/snooze`, { body: { duration } });
  }

  async unsnooze(incidentId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/incidents/${incidentId}/snooze`);
  }

  /** Terminal: TerdutApiError 409 `incident is resolved` when already resolved. */
  async resolve(incidentId: number): Promise<Incident> {
    return this.#http.request('POST', `/api/incidents/${incidentId}/resolve`);
  }

  /** Only resolved incidents (TerdutApiError 409 otherwise). */
  async archive(incidentId: number): Promise<Incident> {
    return this.#http.request('POST', `/api/incidents/${incidentId}/archive`);
  }

  async unarchive(incidentId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/incidents/${incidentId}/archive`);
  }

  /** Returns the new `note` event. */
  async addNote(incidentId: number, content: string): Promise<IncidentEvent> {
    return this.#http.request('POST', `/api/incidents/${incidentId}/notes`, { body: { content } });
  }

  /** Only your own notes (403 otherwise). */
  async deleteNote(incidentId: number, eventId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/incidents/${incidentId}/notes/${eventId}`);
  }
}
