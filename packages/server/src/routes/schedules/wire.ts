import type {
  OnCall,
  Override,
  Rotation,
  Schedule as ScheduleWire,
  TimelineSegment as SegmentWire,
} from '@terdut/contract';
import type { OverrideRow, RotationRow } from '../../repositories/schedules.ts';
import type { OnCallAnswer, Schedule, ScheduleDetail, TimelineSegment } from '../../services/schedules.ts';
import type { OnCallSource } from '../../services/schedule-timeline.ts';

// The schemas are in @terdut/contract (schedules.ts); this maps rows to them.

function sourceFields(source: OnCallSource, rotationName: string | undefined) {
  if (source.kind === 'rotation')
    return { source: source.kind, rotation_id: source.rotationId, rotation: rotationName };
  if (source.kind === 'override') return { source: source.kind, override_id: source.overrideId };
  return { source: source.kind };
}

export function serializeRotation(row: RotationRow): Rotation {
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
    ...(row.end_date === null ? {} : { end_date: row.end_date }),
    ...(restriction ? { restriction } : {}),
    created_at: new Date(row.created_at).toISOString(),
  };
}

export function serializeSchedule(schedule: Schedule | ScheduleDetail): ScheduleWire {
  return {
    id: schedule.id,
    name: schedule.name,
    time_zone: schedule.time_zone,
    ...(schedule.time_zone_from_config ? { time_zone_from_config: true } : {}),
    is_default: schedule.is_default,
    created_at: schedule.created_at.toISOString(),
    ...(schedule.feed_created_at !== null ? { feed_created_at: schedule.feed_created_at.toISOString() } : {}),
    ...('rotations' in schedule ? { rotations: schedule.rotations.map(serializeRotation) } : {}),
  };
}

export function serializeOverride(row: OverrideRow): Override {
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

export function serializeOnCall(answer: OnCallAnswer): OnCall {
  return {
    schedule_id: answer.schedule.id,
    at: answer.at.toISOString(),
    ...(answer.userId === null ? {} : { user_id: answer.userId, username: answer.username ?? '' }),
    ...sourceFields(answer.source, answer.rotationName),
    ...(answer.since ? { since: answer.since.toISOString() } : {}),
    ...(answer.until ? { until: answer.until.toISOString() } : {}),
  };
}

export function serializeSegment(segment: TimelineSegment): SegmentWire {
  return {
    start: segment.start.toISOString(),
    end: segment.end.toISOString(),
    ...(segment.userId === null ? {} : { user_id: segment.userId, username: segment.username ?? '' }),
    ...sourceFields(segment.source, segment.rotationName),
  };
}
