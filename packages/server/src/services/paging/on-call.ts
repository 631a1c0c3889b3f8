import type { Queryable } from '../../db/database.ts';

/**
 * Who is on call at `at`: the one seam between paging and the schedules.
 * services/schedules.ts answers it (`scheduleOnCallLookup`: the effective
 * on-call of a schedule, rotations and overrides included).
 */
export type OnCallLookup = (db: Queryable, at: Date) => Promise<number[]>;

/**
 * The lookup for one schedule (`'default'`, or an id from a step's
 * `{ type: 'on_call', schedule_id }`); services/schedules.ts answers it with
 * `scheduleOnCallLookup(schedules, ref)`.
 */
export type OnCallLookupFor = (ref: number | 'default') => OnCallLookup;
