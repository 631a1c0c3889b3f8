import type { Queryable } from '../db/database.ts';

export interface ScheduleEntryRow {
  id: number;
  user_id: number;
  username: string;
  /** `YYYY-MM-DD`; selected as text so neither driver turns it into a zoned Date. */
  date: string;
  created_at: Date;
}

// The contract's day entries are the whole-day overrides (`day` set) of one
// schedule, the default (migration 0600). Entries of soft-deleted users are
// left in place but treated as absent everywhere: nobody should be paged as
// "on call" through a deleted account, and their days are free to give to
// someone else.
const ENTRY_SELECT = `
  SELECT s.id, s.user_id, u.username, to_char(s.day, 'YYYY-MM-DD') AS date, s.created_at
    FROM schedule_overrides s
    JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL`;

/** Live entries with `from <= date <= to`, oldest date first. */
export async function listEntriesBetween(
  db: Queryable,
  scheduleId: number,
  from: string,
  to: string,
): Promise<ScheduleEntryRow[]> {
  const result = await db.query<ScheduleEntryRow>(
    `${ENTRY_SELECT} WHERE s.schedule_id = $1 AND s.day BETWEEN $2::date AND $3::date ORDER BY s.day`,
    [scheduleId, from, to],
  );
  return result.rows;
}

/** Live entries on any of `dates`, oldest first. */
export async function findEntriesOn(
  db: Queryable,
  scheduleId: number,
  dates: readonly string[],
): Promise<ScheduleEntryRow[]> {
  const result = await db.query<ScheduleEntryRow>(
    `${ENTRY_SELECT} WHERE s.schedule_id = $1 AND s.day = ANY($2::date[]) ORDER BY s.day`,
    [scheduleId, dates],
  );
  return result.rows;
}

/**
 * Removes the entries on `dates` that belong to anyone but `userId` (deleted
 * users included). Returns how many went.
 */
export async function deleteOthersEntriesOn(
  db: Queryable,
  scheduleId: number,
  dates: readonly string[],
  userId: number,
): Promise<number> {
  const result = await db.query(
    'DELETE FROM schedule_overrides WHERE schedule_id = $1 AND day = ANY($2::date[]) AND user_id <> $3',
    [scheduleId, dates, userId],
  );
  return result.rowCount;
}

/** Removes entries on `dates` whose user has been deleted, so the days count as free. */
export async function deleteDeletedUsersEntriesOn(
  db: Queryable,
  scheduleId: number,
  dates: readonly string[],
): Promise<number> {
  const result = await db.query(
    `DELETE FROM schedule_overrides s USING users u
      WHERE s.user_id = u.id AND u.deleted_at IS NOT NULL AND s.schedule_id = $1 AND s.day = ANY($2::date[])`,
    [scheduleId, dates],
  );
  return result.rowCount;
}

/**
 * Gives each of `dates` to `userId`. A date already held (by this user, or by
 * someone whose transaction committed first) is left alone; callers re-read to
 * find out which.
 */
export async function insertEntries(
  db: Queryable,
  scheduleId: number,
  userId: number,
  dates: readonly string[],
  createdAt: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO schedule_overrides (schedule_id, user_id, day, created_at)
     SELECT $1, $2, d, $4 FROM unnest($3::date[]) AS d
     ON CONFLICT (schedule_id, day) WHERE day IS NOT NULL DO NOTHING`,
    [scheduleId, userId, dates, createdAt],
  );
}
