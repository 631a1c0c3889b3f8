/** The on-call schedule and the statistics. */
import { Type, type Static } from 'typebox';
import { Limit, Timestamp } from './common.ts';

export const CalendarDate = Type.String({
  format: 'date',
  description: 'calendar date, YYYY-MM-DD',
  examples: ['2026-07-27'],
  errorMessage: 'must be a real calendar date in YYYY-MM-DD form',
});

/** `ScheduleEntry` of api-contract.md; the five base fields are always present. */
export const ScheduleEntrySchema = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    username: Type.String(),
    date: CalendarDate,
    created_at: Timestamp,
    rotation_id: Type.Optional(
      Type.Integer({ description: 'set when a rotation gives this day (no stored entry)' }),
    ),
    rotation: Type.Optional(Type.String({ description: 'name of that rotation' })),
    override_id: Type.Optional(
      Type.Integer({ description: 'set when an override spanning instants (not a whole day) gives it' }),
    ),
  },
  {
    title: 'ScheduleEntry',
    description:
      'One person on call on one calendar day of the default schedule. Stored day entries carry the ' +
      'five base fields only; a day a rotation covers carries rotation_id and rotation too.',
  },
);
export type ScheduleEntry = Static<typeof ScheduleEntrySchema>;

export const ScheduleQuery = Type.Object({
  from: Type.Optional(CalendarDate),
  to: Type.Optional(CalendarDate),
});
export type ScheduleQuery = Static<typeof ScheduleQuery>;

/** Distinct dates one request may assign. */
export const MAX_DATES_PER_REQUEST = 366;
export const AssignDaysBody = Type.Object({
  user_id: Type.Integer({ minimum: 1 }),
  // Items are checked by the service, not here, so one 400 names every malformed date at once.
  dates: Type.Array(Type.String({ description: 'calendar date, YYYY-MM-DD' }), {
    // Repeats count once, so the list may be longer than the distinct limit.
    maxItems: MAX_DATES_PER_REQUEST * 4,
    description: `at least one and at most ${MAX_DATES_PER_REQUEST} distinct dates`,
  }),
  replace: Type.Optional(Type.Boolean({ default: false })),
});
export type AssignDaysBody = Static<typeof AssignDaysBody>;

const Count = Type.Integer({ minimum: 0 });

export const AlertCountsSchema = Type.Object({ total: Count, firing: Count, resolved: Count });
export type AlertCounts = Static<typeof AlertCountsSchema>;

export const TOP_ALERTS_DEFAULT = 10;
export const TOP_ALERTS_MAX = 100;
export const TopAlertsQuery = Type.Object({
  limit: Type.Optional(Limit(TOP_ALERTS_DEFAULT, TOP_ALERTS_MAX)),
});
export type TopAlertsQuery = Static<typeof TopAlertsQuery>;
export const AlertNameCountSchema = Type.Object({ name: Type.String(), count: Count });
export type AlertNameCount = Static<typeof AlertNameCountSchema>;

export const HourCountSchema = Type.Object({
  hour: Type.Integer({ minimum: 0, maximum: 23, description: "hour of day in the server's TERDUT_TIMEZONE" }),
  count: Count,
});
export type HourCount = Static<typeof HourCountSchema>;

export const DayCountSchema = Type.Object({
  day: Type.Integer({
    minimum: 0,
    maximum: 6,
    description: "weekday in the server's TERDUT_TIMEZONE, Sunday = 0",
  }),
  day_name: Type.String(),
  count: Count,
});
export type DayCount = Static<typeof DayCountSchema>;

const Seconds = Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
  description: 'null when there is no data yet (no data is not zero)',
});
export const IncidentStatsSchema = Type.Object({
  total: Count,
  triggered: Count,
  acknowledged: Count,
  resolved: Count,
  mtta_seconds: Seconds,
  mttr_seconds: Seconds,
});
export type IncidentStats = Static<typeof IncidentStatsSchema>;
