import { MAX_DATES_PER_REQUEST } from '@terdut/contract';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { requireAdmin, type Principal } from '../auth/principal.ts';
import { ApiError, badRequest, conflict, notFound } from '../errors.ts';
import { addDays, isCalendarDate, localDate } from '../calendar-date.ts';
import { findUserById } from '../repositories/users.ts';
import {
  deleteDeletedUsersEntriesOn,
  deleteEntry,
  deleteOthersEntriesOn,
  findEntriesOn,
  findEntryOn,
  insertEntries,
  listEntriesBetween,
  type ScheduleEntryRow,
} from '../repositories/schedule.ts';

/** How far ahead `GET /api/schedule` looks when the caller gives no `to`. */
export const DEFAULT_WINDOW_DAYS = 30;

export interface AssignDays {
  userId: number;
  dates: readonly string[];
  replace: boolean;
}

/** The on-call schedule: one person per calendar day, "today" taken in TERDUT_TIMEZONE. */
export class ScheduleService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #timezone: string;

  constructor(deps: { db: Database; clock: Clock; config: Pick<Config, 'timezone'> }) {
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#timezone = deps.config.timezone;
  }

  /** Today's date in the configured zone, e.g. `2026-07-28` at 23:30 UTC in Europe/Berlin. */
  today(): string {
    return localDate(this.#clock.now(), this.#timezone);
  }

  /**
   * Entries from `from` to `to`, both inclusive. `from` defaults to today and
   * `to` to `from` + 30 days. Throws 400 for a malformed date or `from` > `to`.
   */
  async list(range: { from?: string; to?: string }): Promise<ScheduleEntryRow[]> {
    const from = range.from ?? this.today();
    if (!isCalendarDate(from))
      throw badRequest(`query field "from" is not a date in YYYY-MM-DD form: "${from}"`);
    const to = range.to ?? addDays(from, DEFAULT_WINDOW_DAYS);
    if (!isCalendarDate(to)) throw badRequest(`query field "to" is not a date in YYYY-MM-DD form: "${to}"`);
    if (from > to) {
      const fromNote = range.from === undefined ? ' (today, the default)' : '';
      throw badRequest(`query field "from" (${from}${fromNote}) is after "to" (${to})`);
    }
    // Oldest date first, unlike the contract's newest-first default: a
    // schedule is read like a calendar, forward from today, and clients render
    // it as a rota in that order.
    return listEntriesBetween(this.#db, from, to);
  }

  /** Who is on call today; throws 404 "no one is on call today" (a normal state). */
  async current(): Promise<ScheduleEntryRow> {
    const entry = await findEntryOn(this.#db, this.today());
    if (!entry) throw new ApiError(404, 'no one is on call today');
    return entry;
  }

  /**
   * Gives `dates` to one person, all or nothing. A date someone else holds is
   * refused with 409 unless `replace`; a date the person already holds stays
   * as it is. Repeated dates count once. Returns the entries, oldest first.
   */
  async assign(principal: Principal, request: AssignDays): Promise<ScheduleEntryRow[]> {
    requireAdmin(principal, 'change the on-call schedule');
    const dates = validDates(request.dates);
    return this.#db.transaction(async (tx) => {
      const user = await findUserById(tx, request.userId);
      if (!user) throw notFound(`user ${request.userId}`);
      if (user.kind !== 'person') {
        throw badRequest(
          `field "user_id": user ${request.userId} is a service account; only people can be on call`,
        );
      }
      if (request.replace) {
        await deleteOthersEntriesOn(tx, dates, user.id);
      } else {
        const taken = (await findEntriesOn(tx, dates)).filter((entry) => entry.user_id !== user.id);
        if (taken.length > 0) throw heldByOthers(taken);
        await deleteDeletedUsersEntriesOn(tx, dates);
      }
      await insertEntries(tx, user.id, dates, this.#clock.now());
      // Re-read rather than trust the insert: a concurrent request may have
      // taken a date between our check and our insert (ON CONFLICT DO NOTHING
      // then skipped it). Throwing rolls everything back: all or nothing.
      const entries = await findEntriesOn(tx, dates);
      const lost = entries.filter((entry) => entry.user_id !== user.id);
      if (lost.length > 0 || entries.length !== dates.length) throw heldByOthers(lost);
      return entries;
    });
  }

  /** Deletes one entry; admins only; 404 when there is no such entry. */
  async remove(principal: Principal, id: number): Promise<void> {
    requireAdmin(principal, 'change the on-call schedule');
    if (!(await deleteEntry(this.#db, id))) throw notFound(`schedule entry ${id}`);
  }
}

/** Distinct, sorted dates; 400 naming every malformed one. */
function validDates(dates: readonly string[]): string[] {
  if (dates.length === 0) throw badRequest('field "dates" must list at least one date (YYYY-MM-DD)');
  const bad = dates.filter((date) => !isCalendarDate(date));
  if (bad.length > 0) {
    const shown = bad.slice(0, 5).map((date) => JSON.stringify(date));
    const more = bad.length > 5 ? ` and ${bad.length - 5} more` : '';
    throw badRequest(`field "dates" has dates not in YYYY-MM-DD form: ${shown.join(', ')}${more}`);
  }
  const distinct = [...new Set(dates)].sort();
  if (distinct.length > MAX_DATES_PER_REQUEST) {
    throw badRequest(
      `field "dates" lists ${distinct.length} dates; send at most ${MAX_DATES_PER_REQUEST} per request`,
    );
  }
  return distinct;
}

function heldByOthers(taken: readonly ScheduleEntryRow[]) {
  if (taken.length === 0) return conflict('another request changed these dates at the same time; try again');
  const shown = taken.slice(0, 5).map((entry) => `${entry.date} (${entry.username})`);
  const more = taken.length > 5 ? ` and ${taken.length - 5} more` : '';
  return conflict(
    `already on call: ${shown.join(', ')}${more}; send "replace": true to take these dates over`,
  );
}
