import { Type } from 'typebox';
import type { OverrideRow, RotationRow } from '../../repositories/schedules.ts';
import type { OnCallAnswer, Schedule, ScheduleDetail, TimelineSegment } from '../../services/schedules.ts';
import type { OnCallSource } from '../../services/schedule-timeline.ts';

export { ErrorSchema } from '@terdut/contract';

const Instant = Type.String({ format: 'date-time', examples: ['2026-03-30T07:00:00Z'] });
const TimeOfDay = Type.String({
  pattern: '^\\d{2}:\\d{2}$',
  description: 'HH:MM, local',
  examples: ['09:00'],
});
const CalendarDate = Type.String({ description: 'YYYY-MM-DD, local', examples: ['2026-03-30'] });
const SourceKind = Type.Union([Type.Literal('override'), Type.Literal('rotation'), Type.Literal('none')]);

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

export const RotationInputSchema = Type.Object(
  {
    name: Type.String({ maxLength: 100 }),
    participant_ids: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 100 }),
    shift_length: Type.Integer({ minimum: 1, maximum: 8784 }),
    shift_unit: Type.Union([Type.Literal('hours'), Type.Literal('days'), Type.Literal('weeks')]),
    start_date: CalendarDate,
    handoff_time: TimeOfDay,
    layer: Type.Optional(
      Type.Integer({ minimum: -1000, maximum: 1000, description: 'higher wins; default on top' }),
    ),
    restriction: Type.Optional(RestrictionSchema),
  },
  { additionalProperties: false },
);

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
    start_date: CalendarDate,
    handoff_time: TimeOfDay,
    restriction: Type.Optional(RestrictionSchema),
    created_at: Instant,
  },
  { title: 'Rotation', description: 'A layer of a schedule: people in turn, one shift each' },
);

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
    rotations: Type.Optional(Type.Array(RotationSchema)),
  },
  { title: 'Schedule' },
);

export const OverrideSchema = Type.Object(
  {
    id: Type.Integer(),
    schedule_id: Type.Integer(),
    user_id: Type.Integer(),
    username: Type.String(),
    starts_at: Type.Optional(Instant),
    ends_at: Type.Optional(Instant),
    date: Type.Optional({ ...CalendarDate, description: 'set for a whole-day override (a day entry)' }),
    created_at: Instant,
  },
  { title: 'Override', description: 'A person covering an interval, or a whole local day' },
);

export const OnCallSchema = Type.Object(
  {
    schedule_id: Type.Integer(),
    at: Instant,
    user_id: Type.Optional(Type.Integer()),
    username: Type.Optional(Type.String()),
    source: SourceKind,
    rotation_id: Type.Optional(Type.Integer()),
    rotation: Type.Optional(Type.String()),
    override_id: Type.Optional(Type.Integer()),
    since: Type.Optional({ ...Instant, description: 'since when (looking back at most 7 days)' }),
    until: Type.Optional({ ...Instant, description: 'when it changes next (looking ahead at most 62 days)' }),
  },
  { title: 'OnCall', description: 'Who is on call at one instant; no user_id means nobody' },
);

export const SegmentSchema = Type.Object(
  {
    start: Instant,
    end: Instant,
    user_id: Type.Optional(Type.Integer()),
    username: Type.Optional(Type.String()),
    source: SourceKind,
    rotation_id: Type.Optional(Type.Integer()),
    rotation: Type.Optional(Type.String()),
    override_id: Type.Optional(Type.Integer()),
  },
  { title: 'TimelineSegment' },
);

export const FeedSchema = Type.Object(
  { url: Type.String({ description: 'the secret feed URL; shown only now' }) },
  { title: 'CalendarFeed' },
);

function sourceFields(source: OnCallSource, rotationName: string | undefined) {
  if (source.kind === 'rotation')
    return { source: source.kind, rotation_id: source.rotationId, rotation: rotationName };
  if (source.kind === 'override') return { source: source.kind, override_id: source.overrideId };
  return { source: source.kind };
}

export function serializeRotation(row: RotationRow) {
  const restriction =
    row.restrict_weekdays === null && row.restrict_from === null
      ? undefined
      : {
          ...(row.restrict_weekdays === null ? {} : { weekdays: row.restrict_weekdays }),
          ...(row.restrict_from === null ? {} : { from: row.restrict_from, to: row.restrict_to! }),
        };
  return {
    id: row.id,
    schedule_id: row.schedule_id,
    name: row.name,
    layer: row.layer,
    participants: row.participants.map((p) => ({
      user_id: p.user_id,
      username: p.username,
      ...(p.deleted ? { deleted: true } : {}),
    })),
    shift_length: row.shift_length,
    shift_unit: row.shift_unit,
    start_date: row.start_date,
    handoff_time: row.handoff_time,
    ...(restriction ? { restriction } : {}),
    created_at: new Date(row.created_at).toISOString(),
  };
}

export function serializeSchedule(schedule: Schedule | ScheduleDetail) {
  return {
    id: schedule.id,
    name: schedule.name,
    time_zone: schedule.time_zone,
    ...(schedule.time_zone_from_config ? { time_zone_from_config: true } : {}),
    is_default: schedule.is_default,
    created_at: schedule.created_at.toISOString(),
    ...('rotations' in schedule ? { rotations: schedule.rotations.map(serializeRotation) } : {}),
  };
}

export function serializeOverride(row: OverrideRow) {
  return {
    id: row.id,
    schedule_id: row.schedule_id,
    user_id: row.user_id,
    username: row.username,
    ...(row.day === null
      ? { starts_at: row.starts_at!.toISOString(), ends_at: row.ends_at!.toISOString() }
      : { date: row.day }),
    created_at: row.created_at.toISOString(),
  };
}

export function serializeOnCall(answer: OnCallAnswer) {
  return {
    schedule_id: answer.schedule.id,
    at: answer.at.toISOString(),
    ...(answer.userId === null ? {} : { user_id: answer.userId, username: answer.username ?? '' }),
    ...sourceFields(answer.source, answer.rotationName),
    ...(answer.since ? { since: answer.since.toISOString() } : {}),
    ...(answer.until ? { until: answer.until.toISOString() } : {}),
  };
}

export function serializeSegment(segment: TimelineSegment) {
  return {
    start: segment.start.toISOString(),
    end: segment.end.toISOString(),
    ...(segment.userId === null ? {} : { user_id: segment.userId, username: segment.username ?? '' }),
    ...sourceFields(segment.source, segment.rotationName),
  };
}
