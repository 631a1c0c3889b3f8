import { TOP_ALERTS_DEFAULT } from '@terdut/contract';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import {
  countAlerts,
  foldStatisticsDeltas,
  incidentStats,
  occurrencesByLocalHour,
  topAlertNames,
  type AlertCountsRow,
  type IncidentStatsRow,
  type LocalHourCounts,
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
  /** The folded rollup placed in TERDUT_TIMEZONE, valid while its generation is the database's. */
  #folded: LocalHourCounts | undefined;

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

  /** 24 entries, hour 0-23 of TERDUT_TIMEZONE, empty hours as 0. */
  async alertsByHour(): Promise<{ hour: number; count: number }[]> {
    const counts = new Array<number>(24).fill(0);
    for (const row of await this.#occurrencesByLocalHour()) counts[row.hour]! += row.count;
    return counts.map((count, hour) => ({ hour, count }));
  }

  /** 7 entries, 0 = Sunday, weekdays of TERDUT_TIMEZONE, empty days as 0. */
  async alertsByDay(): Promise<{ day: number; day_name: string; count: number }[]> {
    const counts = new Array<number>(7).fill(0);
    for (const row of await this.#occurrencesByLocalHour()) counts[row.day]! += row.count;
    return counts.map((count, day) => ({ day, day_name: DAY_NAMES[day]!, count }));
  }

  /**
   * Occurrences by local weekday and hour. Placing the ~17,000 quarters of
   * 180 days in the zone is the one costly part of the statistics, and the
   * folded rollup changes only when a fold moves its generation; so the
   * placed rollup is kept, and each request places only the deltas not
   * folded yet (read with the generation in one snapshot). Exact: if the
   * generation moved, the rollup is placed again; if a fold slips in between
   * the two reads, or a quarter lies in two local hours (its rows are
   * counted one by one, rollup and deltas together), everything is placed in
   * one statement.
   */
  async #occurrencesByLocalHour(): Promise<LocalHourCounts['counts']> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const unfolded = await occurrencesByLocalHour(this.#db, this.#timezone, 'unfolded');
      if (unfolded.splitQuarters > 0) break;
      let folded = this.#folded;
      if (folded?.generation !== unfolded.generation) {
        folded = await occurrencesByLocalHour(this.#db, this.#timezone, 'folded');
        this.#folded = folded;
      }
      if (folded.splitQuarters > 0) break;
      if (folded.generation === unfolded.generation) return [...folded.counts, ...unfolded.counts];
    }
    return (await occurrencesByLocalHour(this.#db, this.#timezone, 'all')).counts;
  }

  async incidents(): Promise<IncidentStatsRow> {
    return incidentStats(this.#db);
  }

  /**
   * Folds what the triggers appended into the rollups (a background job;
   * readers are exact either way, this only keeps what they read small).
   * Returns the delta rows folded, undefined when another replica was at it.
   */
  async foldDeltas(): Promise<number | undefined> {
    return this.#db.transaction((tx) => foldStatisticsDeltas(tx));
  }
}
