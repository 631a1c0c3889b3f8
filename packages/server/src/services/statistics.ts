import { TOP_ALERTS_DEFAULT } from '@terdut/contract';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import {
  countAlerts,
  incidentStats,
  occurrencesByHour,
  occurrencesByWeekday,
  topAlertNames,
  type AlertCountsRow,
  type IncidentStatsRow,
} from '../repositories/statistics.ts';

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * Alert frequency and incident response times for every signed-in user.
 * Hours and weekdays are those of TERDUT_TIMEZONE; see repositories/statistics.ts
 * for what counts (archived rows do; an occurrence is one alert in one incident).
 */
export class StatisticsService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #timezone: string;
  readonly #alertStaleAfterMs: number;

  constructor(deps: { db: Database; clock: Clock; config: Pick<Config, 'timezone' | 'alertStaleAfterMs'> }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#timezone = deps.config.timezone;
    this.#alertStaleAfterMs = deps.config.alertStaleAfterMs;
  }

  async alertCounts(): Promise<AlertCountsRow> {
    const staleBefore = new Date(this.#clock.now().getTime() - this.#alertStaleAfterMs);
    return countAlerts(this.#db, staleBefore);
  }

  async topAlerts(limit: number = TOP_ALERTS_DEFAULT): Promise<{ name: string; count: number }[]> {
    return topAlertNames(this.#db, limit);
  }

  async alertsByHour(): Promise<{ hour: number; count: number }[]> {
    return occurrencesByHour(this.#db, this.#timezone);
  }

  async alertsByDay(): Promise<{ day: number; day_name: string; count: number }[]> {
    const rows = await occurrencesByWeekday(this.#db, this.#timezone);
    return rows.map((row) => ({ day: row.day, day_name: DAY_NAMES[row.day]!, count: row.count }));
  }

  async incidents(): Promise<IncidentStatsRow> {
    return incidentStats(this.#db);
  }
}
