import { MAX_DATES_PER_REQUEST } from '@terdut/contract';
import type { Clock } from '../clock.ts';
import { requireAdmin, type Principal } from '../auth/principal.ts';
import { ApiError, badRequest, conflict, notFound } from '../errors.ts';
import { addDays, isCalendarDate } from '../calendar-date.ts';
import { findUserById } from '../repositories/users.ts';
import {
  deleteDeletedUsersEntriesOn,
  deleteOthersEntriesOn,
  findEntriesOn,
  insertEntries,
  type ScheduleEntryRow,
} from '../repositories/schedule.ts';
import type { AuditService } from './audit.ts';
import {
  EARLIEST_DATE,
  LATEST_DATE,
  MAX_WINDOW_DAYS,
  takeBackOverride,
  type SchedulesService,
} from './schedules.ts';
import { localDateOf, startOfLocalDay } from './schedule-timeline.ts';

/** How far ahead `GET /api/schedule` looks when the caller gives no `to`. */
export const DEFAULT_WINDOW_DAYS = 30;

/**
 * Ids of day entries that come from a rotation (no row of their own) sit above
 * every stored id: 2^52 + (days since 1970-01-01 + 1,000,000) × 64 + their
 * place that day (the offset keeps dates back to the 8th century positive;
 * every id stays below 2^53, exact in JSON). Stored ids never get near 2^52,
 * and the id alone tells DELETE which day it was, so it can say which
 * rotation covers it.
 */
const DERIVED_ID_BASE = 2 ** 52;
const DERIVED_PER_DAY = 64;
const DERIVED_DAY_OFFSET = 1_000_000;

export interface AssignDays {
  userId: number;
  dates: readonly string[];
  replace: boolean;
}

/** A day entry as the contract shows it; rotation days say which rotation. */
export interface DayEntry extends ScheduleEntryRow {
  rotation_id?: number;
  rotation?: string;
  override_id?: number;
}

/**
 * The contract's day-based schedule (api-contract.md "On-call schedule"): the
 * default schedule seen one calendar day at a time, "today" being the date in
 * that schedule's zone (TERDUT_TIMEZONE unless an admin set another). Stored
 * entries are its whole-day overrides; days a rotation covers appear too.
 */
export class ScheduleService {
  readonly #clock: Clock;
  readonly #schedules: SchedulesService;
  readonly #audit: AuditService;

  constructor(deps: { clock: Clock; schedules: SchedulesService; audit: AuditService }) {
    this.#clock = deps.clock;
    this.#schedules = deps.schedules;
    this.#audit = deps.audit;
  }

  /** Today's date in the default schedule's zone, e.g. `2026-07-28` at 23:30 UTC in Europe/Berlin. */
  async today(): Promise<string> {
    const schedule = await this.#schedules.defaultSchedule();
    return localDateOf(this.#clock.now().getTime(), schedule.time_zone);
  }

  /**
   * Entries from `from` to `to`, both inclusive: for each day, who is on call
   * that day in the default schedule, in order of their first moment on call.
   * `from` defaults to today and `to` to `from` + 30 days. Throws 400 for a
   * malformed date, `from` > `to`, or more than 366 days.
   */
  async list(range: { from?: string; to?: string }): Promise<DayEntry[]> {
    const from = range.from ?? (await this.today());
    if (!isCalendarDate(from))
      throw badRequest(`query field "from" is not a date in YYYY-MM-DD form: "${from}"`);
    const to = range.to ?? addDays(from, DEFAULT_WINDOW_DAYS);
    if (!isCalendarDate(to)) throw badRequest(`query field "to" is not a date in YYYY-MM-DD form: "${to}"`);
    for (const [field, date] of [
      ['from', from],
      ['to', to],
    ] as const) {
      if (date < EARLIEST_DATE || date >= LATEST_DATE) {
        throw badRequest(
          `query field "${field}" (${date}) must be from ${EARLIEST_DATE} up to ${LATEST_DATE}`,
        );
      }
    }
    if (from > to) {
      const fromNote = range.from === undefined ? ' (today, the default)' : '';
      throw badRequest(`query field "from" (${from}${fromNote}) is after "to" (${to})`);
    }
    if (addDays(from, MAX_WINDOW_DAYS) < to) {
      throw badRequest(`query fields "from" and "to" span more than ${MAX_WINDOW_DAYS} days; ask for less`);
    }
    // Oldest date first, unlike the contract's newest-first default: a
    // schedule is read like a calendar, forward from today, and clients render
    // it as a rota in that order.
    return this.#days(from, to);
  }

  /** Who is on call now, as today's entry; throws 404 "no one is on call today" (a normal state). */
  async current(): Promise<DayEntry> {
    const now = this.#clock.now();
    const onCall = await this.#schedules.onCallAt('default', now);
    const today = localDateOf(now.getTime(), onCall.schedule.time_zone);
    const entry = (await this.#days(today, today)).find((candidate) => candidate.user_id === onCall.userId);
    if (onCall.userId === null || !entry) throw new ApiError(404, 'no one is on call today');
    return entry;
  }

  /**
   * Gives `dates` to one person, all or nothing. A date someone else holds is
   * refused with 409 unless `replace`; a date the person already holds stays
   * as it is. Repeated dates count once. Returns the entries, oldest first.
   * A day a rotation covers is not "held": the entry overrides the rotation.
   */
  async assign(
    principal: Principal,
    request: AssignDays,
    clientAddress?: string,
  ): Promise<ScheduleEntryRow[]> {
    requireAdmin(principal, 'change the on-call schedule');
    const dates = validDates(request.dates);
    // Giving away today moves who is on call now: SchedulesService.change tells both people.
    return this.#schedules.change('default', async (tx, schedule, now) => {
      const scheduleId = schedule.id;
      const user = await findUserById(tx, request.userId);
      if (!user) throw notFound(`user ${request.userId}`);
      if (user.kind !== 'person') {
        throw badRequest(
          `field "user_id": user ${request.userId} is a service account; only people can be on call`,
        );
      }
      if (request.replace) {
        await deleteOthersEntriesOn(tx, scheduleId, dates, user.id);
      } else {
        const taken = (await findEntriesOn(tx, scheduleId, dates)).filter(
          (entry) => entry.user_id !== user.id,
        );
        if (taken.length > 0) throw heldByOthers(taken);
        await deleteDeletedUsersEntriesOn(tx, scheduleId, dates);
      }
      await insertEntries(tx, scheduleId, user.id, dates, now);
      // Re-read rather than trust the insert: a concurrent request may have
      // taken a date between our check and our insert (ON CONFLICT DO NOTHING
      // then skipped it). Throwing rolls everything back: all or nothing.
      const entries = await findEntriesOn(tx, scheduleId, dates);
      const lost = entries.filter((entry) => entry.user_id !== user.id);
      if (lost.length > 0 || entries.length !== dates.length) throw heldByOthers(lost);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'schedule.days_assigned',
        target: `schedule:${scheduleId}`,
        detail: { user_id: user.id, dates, replace: request.replace },
        clientAddress,
      });
      return entries;
    });
  }

  /**
   * Takes one entry (an override of the default schedule) back; admins only.
   * A cover spanning instants that is running ends now, as the schedules
   * API's DELETE does, so who was on call until then stays on record (and
   * today's entries still name that person); any other entry is deleted.
   * An entry that a rotation gives is refused with 409 naming the rotation;
   * 404 when there is no such entry.
   */
  async remove(principal: Principal, id: number, clientAddress?: string): Promise<void> {
    requireAdmin(principal, 'change the on-call schedule');
    if (id >= DERIVED_ID_BASE) {
      const day = dayOfDerivedId(id);
      const entry = day === undefined ? undefined : (await this.#days(day, day)).find((e) => e.id === id);
      if (!entry || entry.rotation === undefined) throw notFound(`schedule entry ${id}`);
      throw conflict(
        `schedule entry ${id} (${entry.date}, ${entry.username}) is covered by rotation ${entry.rotation}; ` +
          'add an override instead (POST /api/schedule with the date and "replace": true)',
      );
    }
    await this.#schedules.change('default', async (tx, schedule, now) => {
      const scheduleId = schedule.id;
      const taken = await takeBackOverride(tx, scheduleId, id, now);
      if (!taken) throw notFound(`schedule entry ${id}`);
      await this.#audit.record(tx, {
        actor: principal,
        action: taken.action,
        target: `schedule:${scheduleId}`,
        detail: taken.detail,
        clientAddress,
      });
    });
  }

  /** The entries of every day from `from` to `to` (inclusive), from the effective timeline. */
  async #days(from: string, to: string): Promise<DayEntry[]> {
    const schedule = await this.#schedules.defaultSchedule();
    const zone = schedule.time_zone;
    const start = startOfLocalDay(from, zone);
    const end = startOfLocalDay(addDays(to, 1), zone);
    const { segments, overrides, rotations } = await this.#schedules.timelineBetween('default', start, end);
    const entries: DayEntry[] = [];
    // Segments are in time order: each day starts looking where the day before left off.
    let first = 0;
    for (let day = from; day <= to; day = addDays(day, 1)) {
      const dayStart = startOfLocalDay(day, zone);
      const dayEnd = startOfLocalDay(addDays(day, 1), zone);
      const seen = new Set<number>();
      while (first < segments.length && segments[first]!.end.getTime() <= dayStart) first++;
      for (let i = first; i < segments.length && segments[i]!.start.getTime() < dayEnd; i++) {
        const segment = segments[i]!;
        if (segment.userId === null || seen.has(segment.userId)) continue;
        seen.add(segment.userId);
        const base = { user_id: segment.userId, username: segment.username ?? '', date: day };
        const source = segment.source;
        if (source.kind === 'override') {
          const row = overrides.get(source.overrideId)!;
          entries.push(
            row.day === day
              ? { id: row.id, ...base, created_at: row.created_at }
              : { id: row.id, ...base, created_at: row.created_at, override_id: row.id },
          );
        } else if (source.kind === 'rotation') {
          const rotation = rotations.get(source.rotationId)!;
          const epochDay = Math.round(Date.parse(`${day}T00:00:00Z`) / 86_400_000);
          entries.push({
            id:
              DERIVED_ID_BASE +
              (epochDay + DERIVED_DAY_OFFSET) * DERIVED_PER_DAY +
              Math.min(seen.size - 1, DERIVED_PER_DAY - 1),
            ...base,
            created_at: rotation.created_at,
            rotation_id: rotation.id,
            rotation: rotation.name,
          });
        }
      }
    }
    return entries;
  }
}

function dayOfDerivedId(id: number): string | undefined {
  const epochDay = Math.floor((id - DERIVED_ID_BASE) / DERIVED_PER_DAY) - DERIVED_DAY_OFFSET;
  const date = new Date(epochDay * 86_400_000);
  if (Number.isNaN(date.getTime())) return undefined;
  const day = date.toISOString().slice(0, 10);
  // A made-up id far past year 9999 decodes to no calendar date: unknown entry.
  return isCalendarDate(day) ? day : undefined;
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
