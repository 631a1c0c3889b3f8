import type { HttpTransport } from './http.ts';

export interface AlertCounts {
  total: number;
  firing: number;
  resolved: number;
}

export interface AlertNameCount {
  name: string;
  count: number;
}

export interface HourCount {
  /** 0-23 in the server's TERDUT_TIMEZONE. */
  hour: number;
  count: number;
}

export interface DayCount {
  /** 0-6, Sunday = 0, in the server's TERDUT_TIMEZONE. */
  day: number;
  day_name: string;
  count: number;
}

export interface IncidentStats {
  total: number;
  triggered: number;
  acknowledged: number;
  resolved: number;
  /** Mean time to acknowledge; null when no incident was acknowledged yet (no data is not zero). */
  mtta_seconds: number | null;
  /** Mean time to resolve; null when no incident was resolved yet. */
  mttr_seconds: number | null;
}

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
