import type { HttpTransport } from './http.ts';

import type { AlertCounts, AlertNameCount, DayCount, HourCount, IncidentStats } from '@terdut/contract';

export type { AlertCounts, AlertNameCount, DayCount, HourCount, IncidentStats } from '@terdut/contract';

/** `/api/stats/*`. */
export class StatsApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  async alerts(): Promise<AlertCounts> {
    return this.#http.request('GET', '/api/stats/alerts');
  }

  /** Alert names by how often they fired, most first. */
  async topAlerts(limit?: number): Promise<AlertNameCount[]> {
    return this.#http.request('GET', '/api/stats/alerts/top', { query: { limit } });
  }

  /** Always 24 entries, hours without alerts included. */
  async alertsByHour(): Promise<HourCount[]> {
    return this.#http.request('GET', '/api/stats/alerts/by-hour');
  }

  /** Always 7 entries, Sunday first. */
  async alertsByDay(): Promise<DayCount[]> {
    return this.#http.request('GET', '/api/stats/alerts/by-day');
  }

  async incidents(): Promise<IncidentStats> {
    return this.#http.request('GET', '/api/stats/incidents');
  }
}
