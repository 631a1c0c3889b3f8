import type { Queryable } from '../db/database.ts';

export interface ScheduleEntryRow {
  id: number;
  user_id: number;
  username: string;
  /** `YYYY-MM-DD`; selected as text so neither driver turns it into a zoned Date. */
  date: string;
  created_at: Date;
}

// Entries of soft-deleted users are left in place but treated as absent
// everywhere: nobody should be paged as "on call" through a deleted account,
// and their days are free to give to someone else.
const ENTRY_SELECT = `
  SELECT s.id, s.user_id, u.username, to_char(s.date, 'YYYY-MM-DD') AS date, s.created_at
    FROM schedule_entries s
    JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL`;

/** Live entries with `from <= date <= to`, oldest date first. */
export async function listEntriesBetween(
  db: Queryable,
  from: string,
  to: string,
): Promise<ScheduleEntryRow[]> {
  const result = await db.query<ScheduleEntryRow>(
    `${ENTRY_SELECT} WHERE s.date BETWEEN $1::date AND $2::date ORDER BY s.date`,
    [from, to],
  );
  return result.rows;
}

/** The live entry for one date, if any. */
export async function findEntryOn(db: Queryable, date: string): Promise<ScheduleEntryRow | undefined> {
  const result = await db.query<ScheduleEntryRow>(`${ENTRY_SELECT} WHERE s.date = $1::date`, [date]);
  return result.rows[0];
}

/** Live entries on any of `dates`, oldest first. */
export async function findEntriesOn(db: Queryable, dates: readonly string[]): Promise<ScheduleEntryRow[]> {
  const result = await db.query<ScheduleEntryRow>(
    `${ENTRY_SELECT} WHERE s.date = ANY($1::date[]) ORDER BY s.date`,
    [dates],
  );
  return result.rows;
}

/**
 * Removes the entries on `dates` that belong to anyone but `userId` (deleted
 * users included). Returns how many went.
 */
export async function deleteOthersEntriesOn(
  db: Queryable,
  dates: readonly string[],
  userId: number,
): Promise<number> {
  const result = await db.query(
    'DELETE FROM schedule_entries WHERE date = ANY($1::date[]) AND user_id <> $2',
    [dates, userId],
  );
  return result.rowCount;
}

/** Removes entries on `dates` whose user has been deleted, so the days count as free. */
export async function deleteDeletedUsersEntriesOn(db: Queryable, dates: readonly string[]): Promise<number> {
  const result = await db.query(
    `DELETE FROM schedule_entries s USING users u
      WHERE s.user_id = u.id AND u.deleted_at IS NOT NULL AND s.date = ANY($1::date[])`,
    [dates],
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
  userId: number,
  dates: readonly string[],
  createdAt: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO schedule_entries (user_id, date, created_at)
     SELECT $1, d, $3 FROM unnest($2::date[]) AS d
     ON CONFLICT (date) DO NOTHING`,
    [userId, dates, createdAt],
  );
}

/** Deletes one entry by id. Returns false when there was none. */
export async function deleteEntry(db: Queryable, id: number): Promise<boolean> {
  const result = await db.query('DELETE FROM schedule_entries WHERE id = $1', [id]);
  return result.rowCount > 0;
}
