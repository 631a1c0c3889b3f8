import type { Queryable } from '../../db/database.ts';
import { localDate } from '../../calendar-date.ts';
import { findEntryOn } from '../../repositories/schedule.ts';

/**
 * Who is on call at `at`: the one seam between paging and the schedule, so a
 * richer schedule model (several rotations) replaces this function only.
 */
export type OnCallLookup = (db: Queryable, at: Date) => Promise<number[]>;

/** Today's person of the one-person-per-day schedule, "today" taken in `timezone`. */
export function dailyScheduleOnCall(timezone: string): OnCallLookup {
  return async (db, at) => {
    const entry = await findEntryOn(db, localDate(at, timezone));
    return entry === undefined ? [] : [entry.user_id];
  };
}
