import type { Queryable } from '../../db/database.ts';

/**
 * Who is on call at `at`: the one seam between paging and the schedules.
 * services/schedules.ts answers it (`scheduleOnCallLookup`: the effective
 * on-call of a schedule, rotations and overrides included).
 */
export type OnCallLookup = (db: Queryable, at: Date) => Promise<number[]>;
