/**
 * `/api/schedules…`: several schedules with rotations and overrides, the
 * effective on-call, and calendar feeds. (The single default schedule's day
 * entries of `/api/schedule` are in schedule.ts.)
 */
import { Type, type Static } from 'typebox';
import { Id } from './common.ts';

const Instant = Type.String({ format: 'date-time', examples: ['2026-03-30T07:00:00Z'] });
const TimeOfDay = Type.String({
  pattern: '^\\d{2}:\\d{2}$',
  description: 'HH:MM, local',
  examples: ['09:00'],
});
/** A local calendar day of a schedule; the service checks it (so one 400 can say what is wrong). */
const LocalDate = Type.String({ description: 'YYYY-MM-DD, local', examples: ['2026-03-30'] });
/** A timestamp in a query or request body; the service parses it and names the field when it cannot. */
const InstantInput = Type.String({ description: 'RFC 3339 timestamp with a zone' });

export const OnCallSourceKindSchema = Type.Union([
  Type.Literal('override'),
  Type.Literal('rotation'),
  Type.Literal('none'),
]);
export type OnCallSourceKind = Static<typeof OnCallSourceKindSchema>;

export const ShiftUnitSchema = Type.Union([
  Type.Literal('hours'),
  Type.Literal('days'),
  Type.Literal('weeks'),
]);
export type ShiftUnit = Static<typeof ShiftUnitSchema>;

export const RestrictionSchema = Type.Object(
  {
    weekdays: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 7 }), {
        maxItems: 7,
        description: 'ISO weekdays, 1 = Monday … 7 = Sunday; absent = every day',
      }),
    ),
    from: Type.Optional(TimeOfDay),
    to: Type.Optional({ ...TimeOfDay, description: 'exclusive; before `from` wraps past midnight' }),
  },
  {
    additionalProperties: false,
    description:
      'The rotation covers an instant only when its local weekday is listed and its local time is in [from, to)',
  },
);
export type RotationRestriction = Static<typeof RestrictionSchema>;

export const RotationInputSchema = Type.Object(
  {
    name: Type.String({ maxLength: 100 }),
    participant_ids: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 100 }),
    shift_length: Type.Integer({ minimum: 1, maximum: 8784 }),
    shift_unit: ShiftUnitSchema,
    start_date: LocalDate,
    handoff_time: TimeOfDay,
    end_date: Type.Optional(
      Type.String({
        description:
          "YYYY-MM-DD, local: the rotation's last shift ends this day at handoff_time (after start_date); left out: no end",
        examples: ['2027-03-29'],
      }),
    ),
    layer: Type.Optional(
      Type.Integer({ minimum: -1000, maximum: 1000, description: 'higher wins; default on top' }),
    ),
    restriction: Type.Optional(RestrictionSchema),
  },
  { additionalProperties: false },
);
export type RotationInput = Static<typeof RotationInputSchema>;

export const RotationSchema = Type.Object(
  {
    id: Type.Integer(),
    schedule_id: Type.Integer(),
    name: Type.String(),
    layer: Type.Integer(),
    participants: Type.Array(
      Type.Object({
        user_id: Type.Integer(),
        username: Type.String(),
        deleted: Type.Optional(Type.Boolean()),
      }),
    ),
    shift_length: Type.Integer(),
    shift_unit: Type.String(),
    start_date: LocalDate,
    handoff_time: TimeOfDay,
    end_date: Type.Optional(LocalDate),
    restriction: Type.Optional(RestrictionSchema),
    created_at: Instant,
  },
  { title: 'Rotation', description: 'A layer of a schedule: people in turn, one shift each' },
);
/**
 * The wire declares `shift_unit` a plain string (widening it later is not a
 * break); the server only ever stores one of the three units it accepts.
 */
export type Rotation = Static<typeof RotationSchema> & { shift_unit: ShiftUnit };

export const ScheduleSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    time_zone: Type.String({ description: 'IANA zone of the rotations and whole-day overrides' }),
    time_zone_from_config: Type.Optional(
      Type.Boolean({ description: 'true: no zone set, TERDUT_TIMEZONE applies (the migrated default only)' }),
    ),
    is_default: Type.Boolean(),
    created_at: Instant,
    feed_created_at: Type.Optional({
      ...Instant,
      description: "when the schedule's calendar feed URL in use was made; absent while the feed is off",
    }),
    rotations: Type.Optional(Type.Array(RotationSchema)),
  },
  { title: 'Schedule' },
);
export type Schedule = Omit<Static<typeof ScheduleSchema>, 'rotations'> & { rotations?: Rotation[] };

export const OverrideSchema = Type.Object(
  {
    id: Type.Integer(),
    schedule_id: Type.Integer(),
    user_id: Type.Integer(),
    username: Type.String(),
    starts_at: Type.Optional(Instant),
    ends_at: Type.Optional(Instant),
    date: Type.Optional({ ...LocalDate, description: 'set for a whole-day override (a day entry)' }),
    created_at: Instant,
  },
  { title: 'Override', description: 'A person covering an interval, or a whole local day' },
);
export type Override = Static<typeof OverrideSchema>;

export const OnCallSchema = Type.Object(
  {
    schedule_id: Type.Integer(),
    at: Instant,
    user_id: Type.Optional(Type.Integer()),
    username: Type.Optional(Type.String()),
    source: OnCallSourceKindSchema,
    rotation_id: Type.Optional(Type.Integer()),
    rotation: Type.Optional(Type.String()),
    override_id: Type.Optional(Type.Integer()),
    since: Type.Optional({ ...Instant, description: 'since when (looking back at most 62 days)' }),
    until: Type.Optional({ ...Instant, description: 'when it changes next (looking ahead at most 62 days)' }),
  },
  { title: 'OnCall', description: 'Who is on call at one instant; no user_id means nobody' },
);
export type OnCall = Static<typeof OnCallSchema>;

export const OnCallNowSchema = Type.Object({ now: OnCallSchema, next: Type.Optional(OnCallSchema) });
export type OnCallNow = Static<typeof OnCallNowSchema>;

export const SegmentSchema = Type.Object(
  {
    start: Instant,
    end: Instant,
    user_id: Type.Optional(Type.Integer()),
    username: Type.Optional(Type.String()),
    source: OnCallSourceKindSchema,
    rotation_id: Type.Optional(Type.Integer()),
    rotation: Type.Optional(Type.String()),
    override_id: Type.Optional(Type.Integer()),
  },
  { title: 'TimelineSegment' },
);
export type TimelineSegment = Static<typeof SegmentSchema>;

export const FeedSchema = Type.Object(
  { url: Type.String({ description: 'the secret feed URL; shown only now' }) },
  { title: 'CalendarFeed' },
);
export type CalendarFeed = Static<typeof FeedSchema>;

export const ScheduleParams = Type.Object({ id: Id });
export const RotationParams = Type.Object({ id: Id, rotation_id: Id });
export type RotationParams = Static<typeof RotationParams>;
export const OverrideParams = Type.Object({ id: Id, override_id: Id });
export type OverrideParams = Static<typeof OverrideParams>;
export const FeedTokenParams = Type.Object({
  token: Type.String({
    maxLength: 100,
    description: '`<feed_id>-<secret>.ics`: the last segment of the `url` that made the feed answered',
  }),
});

/** `?from=&to=` of overrides and the timeline: [from, to), RFC 3339. */
export const WindowQuery = Type.Object({
  from: Type.Optional(InstantInput),
  to: Type.Optional(InstantInput),
});
export type WindowQuery = Static<typeof WindowQuery>;
export const OnCallQuery = Type.Object({ at: Type.Optional(InstantInput) });
export type OnCallQuery = Static<typeof OnCallQuery>;

export const ScheduleCreateSchema = Type.Object(
  { name: Type.String({ maxLength: 100 }), time_zone: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
export type ScheduleCreate = Static<typeof ScheduleCreateSchema>;

export const ScheduleUpdateSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 100 })),
    time_zone: Type.Optional(Type.String({ maxLength: 64 })),
    is_default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ScheduleUpdate = Static<typeof ScheduleUpdateSchema>;

export const OverrideInputSchema = Type.Object(
  { user_id: Id, starts_at: InstantInput, ends_at: InstantInput },
  { additionalProperties: false },
);
export type OverrideInput = Static<typeof OverrideInputSchema>;
