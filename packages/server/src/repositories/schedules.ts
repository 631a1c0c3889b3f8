import type { Queryable } from '../db/database.ts';

export interface ScheduleRow {
  id: number;
  name: string;
  /** NULL: the default schedule following TERDUT_TIMEZONE. */
  time_zone: string | null;
  is_default: boolean;
  created_at: Date;
  /** When its calendar feed's current URL was made; null while it has no feed. */
  feed_created_at: Date | null;
}

export interface RotationRow {
  id: number;
  schedule_id: number;
  name: string;
  layer: number;
  shift_length: number;
  shift_unit: 'hours' | 'days' | 'weeks';
  start_date: string;
  handoff_time: string;
  /** `YYYY-MM-DD`: the last shift ends that day at `handoff_time`; null: no end. */
  end_date: string | null;
  restrict_weekdays: number[] | null;
  restrict_from: string | null;
  restrict_to: string | null;
  created_at: Date;
  /** In order; `deleted` people stay in their place so nobody else's shifts move. */
  participants: { user_id: number; username: string; deleted: boolean }[];
}

export interface OverrideRow {
  id: number;
  schedule_id: number;
  user_id: number;
  username: string;
  /** `YYYY-MM-DD` for a whole-day override, else null. */
  day: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  created_at: Date;
}

export interface FeedRow {
  id: number;
  schedule_id: number | null;
  user_id: number | null;
  secret_hash: string;
}

const SCHEDULE_COLUMNS = `id, name, time_zone, is_default, created_at,
  (SELECT f.created_at FROM schedule_feeds f WHERE f.schedule_id = schedules.id) AS feed_created_at`;

export async function listSchedules(db: Queryable): Promise<ScheduleRow[]> {
  const result = await db.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM schedules ORDER BY is_default DESC, lower(name)`,
  );
  return result.rows;
}

export async function findSchedule(db: Queryable, id: number): Promise<ScheduleRow | undefined> {
  const result = await db.query<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = $1`, [id]);
  return result.rows[0];
}

export async function findDefaultSchedule(db: Queryable): Promise<ScheduleRow | undefined> {
  const result = await db.query<ScheduleRow>(`SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE is_default`);
  return result.rows[0];
}

/** Inserts a schedule; a name taken (case-insensitively) violates `schedules_name`. */
export async function insertSchedule(
  db: Queryable,
  schedule: { name: string; timeZone: string; createdAt: Date },
): Promise<ScheduleRow> {
  const result = await db.query<ScheduleRow>(
    `INSERT INTO schedules (name, time_zone, created_at) VALUES ($1, $2, $3) RETURNING ${SCHEDULE_COLUMNS}`,
    [schedule.name, schedule.timeZone, schedule.createdAt],
  );
  return result.rows[0]!;
}

export async function updateSchedule(
  db: Queryable,
  id: number,
  fields: { name: string; timeZone: string | null },
): Promise<ScheduleRow | undefined> {
  const result = await db.query<ScheduleRow>(
    `UPDATE schedules SET name = $2, time_zone = $3 WHERE id = $1 RETURNING ${SCHEDULE_COLUMNS}`,
    [id, fields.name, fields.timeZone],
  );
  return result.rows[0];
}

/**
 * Locks schedule `id` until the transaction ends, so changes to one schedule
 * take turns: each then reads who is on call as the one before it left it.
 * NO KEY UPDATE, not UPDATE: rows referring to the schedule (overrides,
 * handoff notices) can still be written meanwhile.
 */
export async function lockSchedule(db: Queryable, id: number): Promise<void> {
  await db.query('SELECT 1 FROM schedules WHERE id = $1 FOR NO KEY UPDATE', [id]);
}

/**
 * Whether schedule `id` exists, holding it with FOR KEY SHARE (the lock a
 * foreign key's check takes) until the transaction ends: an escalation
 * policy's step names it, so it must not be deleted before that policy
 * commits. Deleting it (`lockScheduleToDelete`) then waits and sees the
 * policy; changes to the schedule (NO KEY UPDATE) do not wait.
 */
export async function holdScheduleAsTarget(db: Queryable, id: number): Promise<boolean> {
  const result = await db.query('SELECT 1 FROM schedules WHERE id = $1 FOR KEY SHARE', [id]);
  return result.rows.length > 0;
}

/**
 * Schedule `id` locked FOR UPDATE, the lock its DELETE takes, taken before
 * the checks that may refuse the delete so that they read what holds when it
 * happens: a policy naming the schedule that was being saved has committed
 * (`holdScheduleAsTarget` made this wait), one saved later waits for this
 * transaction and finds the schedule gone, and `is_default` is the current flag.
 */
export async function lockScheduleToDelete(db: Queryable, id: number): Promise<ScheduleRow | undefined> {
  const result = await db.query<ScheduleRow>(
    `SELECT ${SCHEDULE_COLUMNS} FROM schedules WHERE id = $1 FOR UPDATE`,
    [id],
  );
  return result.rows[0];
}

/** Makes `id` the one default: clears the old flag first, as the partial unique index requires. */
export async function makeDefaultSchedule(db: Queryable, id: number): Promise<void> {
  await db.query('UPDATE schedules SET is_default = false WHERE is_default AND id <> $1', [id]);
  await db.query('UPDATE schedules SET is_default = true WHERE id = $1', [id]);
}

export async function deleteSchedule(db: Queryable, id: number): Promise<boolean> {
  const result = await db.query('DELETE FROM schedules WHERE id = $1', [id]);
  return result.rowCount > 0;
}

const ROTATION_SELECT = `
  SELECT r.id, r.schedule_id, r.name, r.layer, r.shift_length, r.shift_unit,
         to_char(r.start_date, 'YYYY-MM-DD') AS start_date, r.handoff_time,
         to_char(r.end_date, 'YYYY-MM-DD') AS end_date,
         r.restrict_weekdays, r.restrict_from, r.restrict_to, r.created_at,
         coalesce((
           SELECT json_agg(json_build_object(
                    'user_id', p.user_id, 'username', u.username, 'deleted', u.deleted_at IS NOT NULL)
                  ORDER BY p.position)
             FROM schedule_rotation_participants p JOIN users u ON u.id = p.user_id
            WHERE p.rotation_id = r.id), '[]'::json) AS participants
    FROM schedule_rotations r`;

/** Rotations of a schedule, highest layer first. */
export async function listRotations(db: Queryable, scheduleId: number): Promise<RotationRow[]> {
  const result = await db.query<RotationRow>(
    `${ROTATION_SELECT} WHERE r.schedule_id = $1 ORDER BY r.layer DESC, r.id DESC`,
    [scheduleId],
  );
  return result.rows.map(normaliseRotation);
}

export async function findRotation(
  db: Queryable,
  scheduleId: number,
  id: number,
): Promise<RotationRow | undefined> {
  const result = await db.query<RotationRow>(`${ROTATION_SELECT} WHERE r.schedule_id = $1 AND r.id = $2`, [
    scheduleId,
    id,
  ]);
  return result.rows[0] && normaliseRotation(result.rows[0]);
}

// Both drivers parse json into objects; text is parsed too, so a driver set up
// without a json parser cannot turn participants into a string.
function normaliseRotation(row: RotationRow): RotationRow {
  const participants =
    typeof row.participants === 'string'
      ? (JSON.parse(row.participants) as RotationRow['participants'])
      : row.participants;
  return { ...row, participants };
}

export interface RotationFields {
  name: string;
  layer: number;
  shiftLength: number;
  shiftUnit: 'hours' | 'days' | 'weeks';
  startDate: string;
  handoffTime: string;
  endDate: string | null;
  weekdays: number[] | null;
  from: string | null;
  to: string | null;
  participantIds: number[];
}

/** Inserts or (with `id`) replaces a rotation and its participants. */
export async function saveRotation(
  db: Queryable,
  scheduleId: number,
  fields: RotationFields,
  createdAt: Date,
  id?: number,
): Promise<number> {
  const values = [
    scheduleId,
    fields.name,
    fields.layer,
    fields.shiftLength,
    fields.shiftUnit,
    fields.startDate,
    fields.handoffTime,
    fields.weekdays,
    fields.from,
    fields.to,
    fields.endDate,
  ];
  let rotationId: number;
  if (id === undefined) {
    const result = await db.query<{ id: number }>(
      `INSERT INTO schedule_rotations
         (schedule_id, name, layer, shift_length, shift_unit, start_date, handoff_time,
          restrict_weekdays, restrict_from, restrict_to, end_date, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::date, $7, $8::integer[], $9, $10, $11::date, $12) RETURNING id`,
      [...values, createdAt],
    );
    rotationId = result.rows[0]!.id;
  } else {
    await db.query(
      `UPDATE schedule_rotations
          SET name = $2, layer = $3, shift_length = $4, shift_unit = $5, start_date = $6::date,
              handoff_time = $7, restrict_weekdays = $8::integer[], restrict_from = $9, restrict_to = $10,
              end_date = $11::date
        WHERE schedule_id = $1 AND id = $12`,
      [...values, id],
    );
    await db.query('DELETE FROM schedule_rotation_participants WHERE rotation_id = $1', [id]);
    rotationId = id;
  }
  await db.query(
    `INSERT INTO schedule_rotation_participants (rotation_id, position, user_id)
     SELECT $1, p.position, p.user_id
       FROM unnest($2::bigint[]) WITH ORDINALITY AS p(user_id, position)`,
    [rotationId, fields.participantIds],
  );
  return rotationId;
}

export async function deleteRotation(db: Queryable, scheduleId: number, id: number): Promise<boolean> {
  const result = await db.query('DELETE FROM schedule_rotations WHERE schedule_id = $1 AND id = $2', [
    scheduleId,
    id,
  ]);
  return result.rowCount > 0;
}

export async function highestLayer(db: Queryable, scheduleId: number): Promise<number> {
  const result = await db.query<{ layer: number | null }>(
    'SELECT max(layer) AS layer FROM schedule_rotations WHERE schedule_id = $1',
    [scheduleId],
  );
  return result.rows[0]?.layer ?? 0;
}

// Overrides of soft-deleted people are treated as absent, like their day entries always were.
const OVERRIDE_SELECT = `
  SELECT o.id, o.schedule_id, o.user_id, u.username, to_char(o.day, 'YYYY-MM-DD') AS day,
         o.starts_at, o.ends_at, o.created_at
    FROM schedule_overrides o
    JOIN users u ON u.id = o.user_id AND u.deleted_at IS NULL`;

/**
 * Live overrides of `scheduleId` that may touch [from, to): spans that overlap
 * it, and whole days from the day before `fromDay` to the day after `toDay`
 * (the caller knows the zone and trims exactly). Oldest first.
 */
export async function listOverridesNear(
  db: Queryable,
  scheduleId: number | undefined,
  range: { from: Date; to: Date; fromDay: string; toDay: string },
): Promise<OverrideRow[]> {
  const result = await db.query<OverrideRow>(
    `${OVERRIDE_SELECT}
      WHERE ($1::bigint IS NULL OR o.schedule_id = $1)
        AND ((o.day IS NULL AND o.starts_at < $3 AND o.ends_at > $2)
          OR (o.day BETWEEN $4::date - 1 AND $5::date + 1))
      ORDER BY o.id`,
    [scheduleId ?? null, range.from, range.to, range.fromDay, range.toDay],
  );
  return result.rows;
}

export async function findOverride(
  db: Queryable,
  scheduleId: number,
  id: number,
): Promise<OverrideRow | undefined> {
  const result = await db.query<OverrideRow>(`${OVERRIDE_SELECT} WHERE o.schedule_id = $1 AND o.id = $2`, [
    scheduleId,
    id,
  ]);
  return result.rows[0];
}

export async function insertSpanOverride(
  db: Queryable,
  scheduleId: number,
  override: { userId: number; startsAt: Date; endsAt: Date; createdAt: Date },
): Promise<number> {
  const result = await db.query<{ id: number }>(
    `INSERT INTO schedule_overrides (schedule_id, user_id, starts_at, ends_at, created_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [scheduleId, override.userId, override.startsAt, override.endsAt, override.createdAt],
  );
  return result.rows[0]!.id;
}

/**
 * Ends span override `id` at `at` when it runs then (began before `at`, ends
 * after it); false for a whole-day entry or one that is not running.
 */
export async function endOverrideAt(
  db: Queryable,
  scheduleId: number,
  id: number,
  at: Date,
): Promise<boolean> {
  const result = await db.query(
    `UPDATE schedule_overrides SET ends_at = $3
      WHERE schedule_id = $1 AND id = $2 AND day IS NULL AND starts_at < $3 AND ends_at > $3`,
    [scheduleId, id, at],
  );
  return result.rowCount > 0;
}

export async function deleteOverride(db: Queryable, scheduleId: number, id: number): Promise<boolean> {
  const result = await db.query('DELETE FROM schedule_overrides WHERE schedule_id = $1 AND id = $2', [
    scheduleId,
    id,
  ]);
  return result.rowCount > 0;
}

/** The schedule ids a person appears in, as a participant or through an override. */
export async function schedulesOfPerson(db: Queryable, userId: number): Promise<number[]> {
  const result = await db.query<{ schedule_id: number }>(
    `SELECT r.schedule_id FROM schedule_rotation_participants p
       JOIN schedule_rotations r ON r.id = p.rotation_id WHERE p.user_id = $1
     UNION SELECT schedule_id FROM schedule_overrides WHERE user_id = $1`,
    [userId],
  );
  return result.rows.map((row) => row.schedule_id).sort((a, b) => a - b);
}

export async function findFeed(db: Queryable, id: number): Promise<FeedRow | undefined> {
  const result = await db.query<FeedRow>(
    'SELECT id, schedule_id, user_id, secret_hash FROM schedule_feeds WHERE id = $1',
    [id],
  );
  return result.rows[0];
}

/**
 * Gives the schedule's or person's feed a new secret hash, creating the feed
 * when there is none; a new id each time, so an old URL stops working at once.
 * One upsert, not delete-then-insert: two renewals at once (a double click,
 * two replicas) must not collide on the owner's unique key.
 */
export async function replaceFeed(
  db: Queryable,
  owner: { scheduleId: number } | { userId: number },
  secretHash: string,
  createdAt: Date,
): Promise<number> {
  const scheduleId = 'scheduleId' in owner ? owner.scheduleId : null;
  const userId = 'userId' in owner ? owner.userId : null;
  const ownerColumn = 'scheduleId' in owner ? 'schedule_id' : 'user_id';
  const result = await db.query<{ id: number }>(
    `INSERT INTO schedule_feeds (schedule_id, user_id, secret_hash, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (${ownerColumn}) DO UPDATE
       SET id = DEFAULT, secret_hash = EXCLUDED.secret_hash, created_at = EXCLUDED.created_at
     RETURNING id`,
    [scheduleId, userId, secretHash, createdAt],
  );
  return result.rows[0]!.id;
}

export async function deleteFeed(
  db: Queryable,
  owner: { scheduleId: number } | { userId: number },
): Promise<boolean> {
  const result =
    'scheduleId' in owner
      ? await db.query('DELETE FROM schedule_feeds WHERE schedule_id = $1', [owner.scheduleId])
      : await db.query('DELETE FROM schedule_feeds WHERE user_id = $1', [owner.userId]);
  return result.rowCount > 0;
}

/** When the person's calendar feed's current URL was made; undefined while they have none. */
export async function personFeedCreatedAt(db: Queryable, userId: number): Promise<Date | undefined> {
  const result = await db.query<{ created_at: Date }>(
    'SELECT created_at FROM schedule_feeds WHERE user_id = $1',
    [userId],
  );
  return result.rows[0]?.created_at;
}
