import type { RotationInput } from '@terdut/contract';
import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { requireAdmin, requireSelfOrAdmin, type Principal } from '../auth/principal.ts';
import { generateApiKey, hashApiKey, secretsEqual } from '../auth/secrets.ts';
import { ApiError, badRequest, conflict, notFound } from '../errors.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import { addDays, isCalendarDate } from '../calendar-date.ts';
import { instantField } from '../instant.ts';
import { findPersonById, findUserById } from '../repositories/users.ts';
import { keptInstanceSecret } from '../repositories/instance-secrets.ts';
import { stepsPagingSchedule, type StepPagingSchedule } from '../repositories/escalation-policies.ts';
import {
  deleteFeed,
  deleteOverride,
  deleteRotation,
  endOverrideAt,
  deleteSchedule,
  findDefaultSchedule,
  findFeed,
  findOverride,
  findRotation,
  findSchedule,
  highestLayer,
  insertSchedule,
  insertSpanOverride,
  listOverridesNear,
  listRotations,
  listSchedules,
  lockSchedule,
  lockScheduleToDelete,
  makeDefaultSchedule,
  replaceFeed,
  saveRotation,
  schedulesOfPerson,
  updateSchedule,
  type OverrideRow,
  type RotationFields,
  type RotationRow,
  type ScheduleRow,
} from '../repositories/schedules.ts';
import type { AuditService } from './audit.ts';
import {
  handoffs,
  onCallAt as effectiveOnCallAt,
  canonicalTimeZone,
  localDateOf,
  localDaysBefore,
  parseTimeOfDay,
  personIntervals,
  startOfLocalDay,
  timeline,
  type OnCallSource,
  type ScheduleSpec,
  type ShiftUnit,
} from './schedule-timeline.ts';
import { renderCalendar, type CalendarEvent } from './schedule-calendar.ts';

/** A schedule by id, or the default one. */
export type ScheduleRef = number | 'default';

/** A schedule with its zone resolved (the default may follow TERDUT_TIMEZONE). */
export interface Schedule extends Omit<ScheduleRow, 'time_zone'> {
  time_zone: string;
  /** True when the zone is TERDUT_TIMEZONE because no zone was set. */
  time_zone_from_config: boolean;
}

export interface ScheduleDetail extends Schedule {
  rotations: RotationRow[];
}

/** One stretch of the effective schedule, with names for display. */
export interface TimelineSegment {
  start: Date;
  end: Date;
  userId: number | null;
  username: string | null;
  source: OnCallSource;
  /** Set for rotation segments. */
  rotationName?: string;
}

export interface OnCallAnswer {
  schedule: Schedule;
  at: Date;
  userId: number | null;
  username: string | null;
  source: OnCallSource;
  rotationName?: string;
  /** Since when this person (or nobody) has been on call, within the look-back. */
  since?: Date;
  /** When it changes next, within the look-ahead; absent when it does not change in that time. */
  until?: Date;
}

export interface HandoffNotice {
  at: Date;
  fromUserId: number | null;
  fromUsername: string | null;
  toUserId: number | null;
  toUsername: string | null;
}

/** Someone on call (or nobody, `userId` null). */
export interface OnCallPerson {
  userId: number | null;
  username: string | null;
}

/** A change to a schedule that moved who is on call at `at`, the moment it was saved. */
export interface OnCallChange {
  /** The schedule as the change left it. */
  schedule: Schedule;
  at: Date;
  from: OnCallPerson;
  to: OnCallPerson;
}

/**
 * Told of every change that moves who is on call now, inside the change's
 * transaction (services/paging/handoff-notices.ts tells both people).
 */
export interface OnCallChangeListener {
  /** Runs in `tx`, so what it decides commits with the change or not at all; true when it has messages to send. */
  changed(tx: Queryable, change: OnCallChange): Promise<boolean>;
  /** After the change committed, when `changed` said true. */
  committed(): void;
}

/** A rotation as a request gives it: the contract's type, one source for both sides. */
export type { RotationInput } from '@terdut/contract';

/** The highest `layer` a request may give (the contract's RotationInputSchema). */
const MAX_LAYER = 1000;

/**
 * How many days (of the schedule's calendar, and of 24 hours) `on-call` looks
 * back for `since` first; when the shift began before that (a two-week or
 * monthly rotation), it looks further, up to `LONGEST_LOOK_BACK_DAYS`.
 */
export const LOOK_BACK_DAYS = 7;
export const LONGEST_LOOK_BACK_DAYS = 62;
/** How far `on-call` looks for the next change and `now` for the one after it. */
export const LOOK_AHEAD_DAYS = 62;
/** Longest window `timeline`, `overrides` and the day API compute in one request. */
export const MAX_WINDOW_DAYS = 366;
/** What a calendar feed covers: a little history, a quarter ahead. */
export const FEED_DAYS_BEFORE = 14;
export const FEED_DAYS_AFTER = 92;

const DAY_MS = 86_400_000;
/**
 * The instants the schedule API takes (`at`, `from`, `to`, an override's ends):
 * every rota fits, and so do the look-back, look-ahead and feed margins around
 * them, which PostgreSQL must still read as dates (it has no year 0 and no
 * year 10000 in the form we send).
 */
export const EARLIEST_DATE = '1970-01-01';
export const LATEST_DATE = '9000-01-01';
const EARLIEST_MS = Date.parse(`${EARLIEST_DATE}T00:00:00Z`);
const LATEST_MS = Date.parse(`${LATEST_DATE}T00:00:00Z`);
const MAX_SHIFT: Record<ShiftUnit, number> = { hours: 24 * 366, days: 366, weeks: 52 };

/**
 * Schedules, their rotations and overrides, and the effective on-call that
 * follows from them (`schedule-timeline.ts` does the computing). Reads are for
 * everyone signed in; changes are for admins and audited.
 *
 * For other services (paging): `onCallAt(ref, instant)` and
 * `handoffsBetween(ref, from, to)`, no principal needed.
 */
export class SchedulesService {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #audit: AuditService;
  readonly #serverZone: string;
  readonly #publicUrl: string | undefined;
  /** This installation's own (migration 1060): two servers' feeds never share a UID. */
  readonly #uidDomain: () => Promise<string>;
  readonly #onCallChanges: OnCallChangeListener | undefined;

  /** `onCallChanges`: told when a change moves who is on call now (handoff notices). */
  constructor(deps: {
    db: Database;
    clock: Clock;
    audit: AuditService;
    config: Pick<Config, 'timezone' | 'publicUrl'>;
    onCallChanges?: OnCallChangeListener;
  }) {
    this.#db = deps.db;
    this.#onCallChanges = deps.onCallChanges;
    this.#clock = deps.clock;
    this.#audit = deps.audit;
    this.#serverZone = deps.config.timezone;
    this.#publicUrl = deps.config.publicUrl?.replace(/\/+$/, '');
    this.#uidDomain = keptInstanceSecret(deps.db, 'calendar_uid_domain', (id) => `${id}.terdut`);
  }

  // ---- schedules ---------------------------------------------------------

  async list(): Promise<Schedule[]> {
    return (await listSchedules(this.#db)).map((row) => this.#resolve(row));
  }

  /** One schedule with its rotations, highest layer first; 404 when unknown. */
  async get(ref: ScheduleRef, db: Queryable = this.#db): Promise<ScheduleDetail> {
    const schedule = await this.#find(db, ref);
    return { ...schedule, rotations: await listRotations(db, schedule.id) };
  }

  async create(
    principal: Principal,
    input: { name: string; time_zone: string },
    clientAddress: string,
  ): Promise<ScheduleDetail> {
    requireAdmin(principal, 'create schedules');
    const name = scheduleName(input.name);
    const timeZone = timeZoneField(input.time_zone);
    return this.#db.transaction(async (tx) => {
      const row = await uniqueName(name, () =>
        insertSchedule(tx, { name, timeZone, createdAt: this.#clock.now() }),
      );
      await this.#record(
        tx,
        principal,
        'schedule.created',
        row.id,
        { name, time_zone: timeZone },
        clientAddress,
      );
      return { ...this.#resolve(row), rotations: [] };
    });
  }

  /** Renames, moves to another zone, or makes the default (the flag moves; it cannot be cleared). */
  async update(
    principal: Principal,
    id: number,
    input: { name?: string; time_zone?: string; is_default?: boolean },
    clientAddress: string,
  ): Promise<ScheduleDetail> {
    requireAdmin(principal, 'change schedules');
    if (input.is_default === false) {
      throw badRequest('field "is_default": make another schedule the default instead of clearing it here');
    }
    // A new zone moves every wall-clock handoff, and so may who is on call now.
    return this.change(id, async (tx, current) => {
      const name = input.name === undefined ? current.name : scheduleName(input.name);
      const kept = current.time_zone_from_config ? null : current.time_zone;
      const timeZone = input.time_zone === undefined ? kept : timeZoneField(input.time_zone);
      await uniqueName(name, () => updateSchedule(tx, id, { name, timeZone }));
      if (input.is_default === true) await makeDefaultSchedule(tx, id);
      await this.#record(tx, principal, 'schedule.updated', id, input, clientAddress);
      return this.get(id, tx);
    });
  }

  /**
   * Deletes a schedule with its rotations, overrides and feed. 409 for the
   * default, and for a schedule an escalation policy's step pages (naming
   * the policies and steps): deleted, that step would page nobody.
   */
  async remove(principal: Principal, id: number, clientAddress: string): Promise<void> {
    requireAdmin(principal, 'delete schedules');
    await this.#db.transaction(async (tx) => {
      // Locked first, so a policy naming the schedule cannot commit between the check and the delete.
      const schedule = await lockScheduleToDelete(tx, id);
      if (!schedule) throw notFound(`schedule ${id}`);
      if (schedule.is_default) {
        throw conflict(`schedule ${id} is the default; make another schedule the default first`);
      }
      const pagedBy = await stepsPagingSchedule(tx, id);
      if (pagedBy.length > 0) throw conflict(scheduleStillPaged(schedule.name, pagedBy));
      await deleteSchedule(tx, id);
      await this.#record(tx, principal, 'schedule.deleted', id, { name: schedule.name }, clientAddress);
    });
  }

  // ---- rotations ---------------------------------------------------------

  /** Adds a rotation; without `layer` it goes on top of the existing ones. */
  async addRotation(
    principal: Principal,
    scheduleId: number,
    input: RotationInput,
    clientAddress: string,
  ): Promise<RotationRow> {
    requireAdmin(principal, 'change schedules');
    return this.#saveRotation(principal, scheduleId, input, clientAddress);
  }

  /** Replaces a rotation's definition as a whole; 404 when the schedule has no such rotation. */
  async replaceRotation(
    principal: Principal,
    scheduleId: number,
    rotationId: number,
    input: RotationInput,
    clientAddress: string,
  ): Promise<RotationRow> {
    requireAdmin(principal, 'change schedules');
    return this.#saveRotation(principal, scheduleId, input, clientAddress, rotationId);
  }

  async removeRotation(
    principal: Principal,
    scheduleId: number,
    rotationId: number,
    clientAddress: string,
  ): Promise<void> {
    requireAdmin(principal, 'change schedules');
    await this.change(scheduleId, async (tx) => {
      if (!(await deleteRotation(tx, scheduleId, rotationId))) {
        throw notFound(`rotation ${rotationId} of schedule ${scheduleId}`);
      }
      await this.#record(
        tx,
        principal,
        'schedule.rotation_deleted',
        scheduleId,
        { rotation_id: rotationId },
        clientAddress,
      );
    });
  }

  async #saveRotation(
    principal: Principal,
    scheduleId: number,
    input: RotationInput,
    clientAddress: string,
    rotationId?: number,
  ): Promise<RotationRow> {
    const fields = rotationFields(input);
    return this.change(scheduleId, async (tx, _schedule, now) => {
      const existing = rotationId === undefined ? undefined : await findRotation(tx, scheduleId, rotationId);
      if (rotationId !== undefined && !existing)
        throw notFound(`rotation ${rotationId} of schedule ${scheduleId}`);
      // Someone deleted keeps their place in a rotation they were in (their
      // shifts fall through, nobody else's move), so the rotation can still
      // be edited as it is; nobody deleted joins one.
      const staying = new Set(existing?.participants.map((participant) => participant.user_id));
      for (const userId of new Set(fields.participantIds)) {
        if (!staying.has(userId)) await requirePerson(tx, userId, 'participant_ids');
      }
      // A new rotation goes on top; a replaced one keeps its place unless told otherwise.
      // On top of the highest layer the API takes is that layer itself: of two
      // rotations on one layer the newer wins, and 1001 could never be sent back.
      const layer =
        input.layer ?? existing?.layer ?? Math.min((await highestLayer(tx, scheduleId)) + 1, MAX_LAYER);
      const id = await saveRotation(tx, scheduleId, { ...fields, layer }, now, rotationId);
      await this.#record(
        tx,
        principal,
        rotationId === undefined ? 'schedule.rotation_created' : 'schedule.rotation_updated',
        scheduleId,
        { rotation_id: id, ...input },
        clientAddress,
      );
      return (await findRotation(tx, scheduleId, id))!;
    });
  }

  // ---- overrides ---------------------------------------------------------

  /** Overrides that touch [from, to), by start (then oldest first); whole-day ones included. */
  async listOverrides(ref: ScheduleRef, window: { from?: string; to?: string }): Promise<OverrideRow[]> {
    const schedule = await this.#find(this.#db, ref);
    const [from, to] = this.#window(window, 30);
    // By start, as a calendar reads (the timeline's precedence, newest wins,
    // is the creation order #overrides keeps for it).
    const overrides = await this.#overrides(this.#db, schedule, from, to);
    return overrides.sort((a, b) => a.start - b.start || a.row.id - b.row.id).map((entry) => entry.row);
  }

  /** A person covers [starts_at, ends_at), replacing whoever the rotations give. */
  async addOverride(
    principal: Principal,
    scheduleId: number,
    input: { user_id: number; starts_at: string; ends_at: string },
    clientAddress: string,
  ): Promise<OverrideRow> {
    requireAdmin(principal, 'change schedules');
    const startsAt = scheduleInstantField('starts_at', input.starts_at);
    const endsAt = scheduleInstantField('ends_at', input.ends_at);
    if (endsAt <= startsAt) throw badRequest(`field "ends_at" (${input.ends_at}) must be after "starts_at"`);
    if (endsAt.getTime() - startsAt.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
      throw badRequest(`an override may last at most ${MAX_WINDOW_DAYS} days; split it or use a rotation`);
    }
    return this.change(scheduleId, async (tx, _schedule, now) => {
      await requirePerson(tx, input.user_id, 'user_id');
      const id = await insertSpanOverride(tx, scheduleId, {
        userId: input.user_id,
        startsAt,
        endsAt,
        createdAt: now,
      });
      await this.#record(
        tx,
        principal,
        'schedule.override_created',
        scheduleId,
        { override_id: id, ...input },
        clientAddress,
      );
      return (await findOverride(tx, scheduleId, id))!;
    });
  }

  /**
   * Takes an override back. One that is running ends now instead of
   * vanishing: its past stays the record of who was on call (and paged),
   * and the person on call again and the one whose cover ended are told
   * (handoff notices). One that has not begun, has ended, or is a
   * whole-day entry is deleted.
   */
  async removeOverride(
    principal: Principal,
    scheduleId: number,
    overrideId: number,
    clientAddress: string,
  ): Promise<void> {
    requireAdmin(principal, 'change schedules');
    await this.change(scheduleId, async (tx, _schedule, now) => {
      const taken = await takeBackOverride(tx, scheduleId, overrideId, now);
      if (!taken) throw notFound(`override ${overrideId} of schedule ${scheduleId}`);
      await this.#record(tx, principal, taken.action, scheduleId, taken.detail, clientAddress);
    });
  }

  // ---- changes -------------------------------------------------------------

  /**
   * Runs `work`, a change to schedule `ref`, in one transaction, with the
   * instant it counts as made (`now`). When it moves who is on call now,
   * `onCallChanges` is told in the same transaction, so the people on both
   * sides are told exactly once, or not at all if it rolls back. Changes to
   * one schedule take turns (its row is locked first), so each compares
   * with what the one before it left; two at once would each see the old
   * person and tell the wrong one their shift ended.
   *
   * @example await schedules.change('default', (tx, schedule, now) => insertEntries(tx, schedule.id, …))
   */
  async change<T>(
    ref: ScheduleRef,
    work: (tx: Queryable, schedule: Schedule, now: Date) => Promise<T>,
  ): Promise<T> {
    return this.#changing(
      async (tx) => {
        const schedule = await this.#find(tx, ref);
        await lockSchedule(tx, schedule.id);
        return [schedule];
      },
      (tx, [schedule], now) => work(tx, schedule!, now),
    );
  }

  /**
   * Runs `work`, a change made outside the schedules that still moves who is
   * on call in them (deleting person `userId`: their rotation shifts fall
   * through to the layers below and their overrides vanish), as `change`
   * does for one schedule: every schedule that names the person is locked,
   * in id order, and wherever who is on call now moved, `onCallChanges` is
   * told in `work`'s transaction. Schedules that do not name the person
   * cannot move (the others' turns stay where they were).
   *
   * @example await schedules.changeOfPerson(7, (tx, now) => softDeleteUser(tx, 7, now))
   */
  async changeOfPerson<T>(userId: number, work: (tx: Queryable, now: Date) => Promise<T>): Promise<T> {
    return this.#changing(
      async (tx) => {
        const named: Schedule[] = [];
        // Ascending ids: two such changes lock in the same order, and `change` locks one only.
        for (const id of await schedulesOfPerson(tx, userId)) {
          await lockSchedule(tx, id);
          const row = await findSchedule(tx, id);
          if (row) named.push(this.#resolve(row)); // deleted meanwhile: nobody there to tell
        }
        return named;
      },
      (tx, _schedules, now) => work(tx, now),
    );
  }

  /**
   * The transaction of `change` and `changeOfPerson`: `lock` locks and
   * returns the schedules the change may move; who is on call now in each
   * is read before `work` and again after it, and `onCallChanges` is told
   * of each that moved, before the commit.
   */
  async #changing<T>(
    lock: (tx: Queryable) => Promise<Schedule[]>,
    work: (tx: Queryable, schedules: Schedule[], now: Date) => Promise<T>,
  ): Promise<T> {
    const listener = this.#onCallChanges;
    let toSend = false;
    const result = await this.#db.transaction(async (tx) => {
      const schedules = await lock(tx);
      const now = this.#clock.now();
      const before: OnCallPerson[] = [];
      if (listener) {
        for (const schedule of schedules) before.push(await this.#personOnCallAt(tx, schedule, now));
      }
      const result = await work(tx, schedules, now);
      if (listener) {
        for (const [index, schedule] of schedules.entries()) {
          // Read again: the change may have moved the schedule to another zone.
          const changed = await this.#find(tx, schedule.id);
          const from = before[index]!;
          const to = await this.#personOnCallAt(tx, changed, now);
          if (to.userId === from.userId) continue;
          if (await listener.changed(tx, { schedule: changed, at: now, from, to })) toSend = true;
        }
      }
      return result;
    });
    if (toSend) listener?.committed();
    return result;
  }

  // ---- the effective schedule ---------------------------------------------

  /**
   * Just the user id on call in `ref` at `at` (null: nobody), computed for
   * that instant alone: the cheap question paging asks for every page.
   * Runs on `db`, so a caller's transaction sees its own writes.
   */
  async onCallUserAt(ref: ScheduleRef, at: Date, db: Queryable = this.#db): Promise<number | null> {
    const schedule = await this.#find(db, ref);
    const spec = await this.#spec(db, schedule, at.getTime(), at.getTime() + 1);
    return effectiveOnCallAt(spec, at.getTime()).userId;
  }

  /**
   * Who is on call in schedule `ref` at `at` (for paging: "the person on
   * call in schedule S"); `userId` null means nobody. 404 for an unknown id.
   *
   * @example const { userId } = await schedules.onCallAt('default', new Date());
   */
  async onCallAt(ref: ScheduleRef, at: Date, db: Queryable = this.#db): Promise<OnCallAnswer> {
    const schedule = await this.#find(db, ref);
    const atMs = at.getTime();
    // A week back on the schedule's calendar or 168 hours, whichever reaches
    // further: a weekly shift across an autumn change lasts 169 hours, and one
    // ending at a handoff time the spring change skips (02:30 -> 03:30) a
    // week and an hour of wall time; a week before a time just after a gap
    // falls in the gap, which reads as after it. Each must have its start found.
    // A shift that began before that (two-week and monthly rotations, long
    // overrides) is looked for further back, so that it too says since when.
    const longest = atMs - LONGEST_LOOK_BACK_DAYS * DAY_MS;
    let lookBack = Math.min(
      atMs - LOOK_BACK_DAYS * DAY_MS,
      localDaysBefore(atMs, schedule.time_zone, LOOK_BACK_DAYS),
    );
    let segments: TimelineSegment[];
    let intervals: ReturnType<typeof personIntervals>;
    let index: number;
    for (;;) {
      segments = await this.#timeline(db, schedule, lookBack, atMs + LOOK_AHEAD_DAYS * DAY_MS);
      intervals = personIntervals(
        segments.map((s) => ({ ...s, start: s.start.getTime(), end: s.end.getTime() })),
      );
      index = intervals.findIndex((interval) => interval.start <= atMs && atMs < interval.end);
      if (index > 0 || lookBack <= longest) break;
      lookBack = Math.max(longest, atMs - 3 * (atMs - lookBack));
    }
    const segment = segments.find((s) => s.start.getTime() <= atMs && atMs < s.end.getTime())!;
    const interval = intervals[index]!;
    const isFirst = index === 0;
    const isLast = index === intervals.length - 1;
    return {
      schedule,
      at,
      userId: segment.userId,
      username: segment.username,
      source: segment.source,
      ...(segment.rotationName === undefined ? {} : { rotationName: segment.rotationName }),
      ...(isFirst ? {} : { since: new Date(interval.start) }),
      ...(isLast ? {} : { until: new Date(interval.end) }),
    };
  }

  /**
   * Who is on call in `ref` at `at`, or now when no `at` is given: "now" is
   * the app's clock, as everywhere else, never the machine's (tests move it).
   */
  async onCallAtOrNow(ref: ScheduleRef, at: Date | undefined): Promise<OnCallAnswer> {
    return this.onCallAt(ref, at ?? this.#clock.now());
  }

  /** Who is on call now, and who comes next (absent when nothing changes within the look-ahead). */
  async nowAndNext(ref: ScheduleRef): Promise<{ now: OnCallAnswer; next?: OnCallAnswer }> {
    const now = await this.onCallAt(ref, this.#clock.now());
    if (now.until === undefined) return { now };
    return { now, next: await this.onCallAt(ref, now.until) };
  }

  /**
   * The changes of who is on call in (from, to), for handoff notices. Each
   * says who hands over to whom; either side may be nobody. Runs on `db`,
   * so a caller's transaction sees its own writes.
   *
   * The notices themselves are sent by services/paging/handoff-notices.ts
   * (through `allHandoffsBetween`).
   */
  async handoffsBetween(
    ref: ScheduleRef,
    from: Date,
    to: Date,
    db: Queryable = this.#db,
  ): Promise<HandoffNotice[]> {
    const schedule = await this.#find(db, ref);
    const spec = await this.#spec(db, schedule, from.getTime(), to.getTime());
    const names = namesIn(spec);
    return handoffs(spec, from.getTime(), to.getTime()).map((h) => ({
      at: new Date(h.at),
      fromUserId: h.fromUserId,
      fromUsername: h.fromUserId === null ? null : (names.get(h.fromUserId) ?? null),
      toUserId: h.toUserId,
      toUsername: h.toUserId === null ? null : (names.get(h.toUserId) ?? null),
    }));
  }

  /**
   * The seam for handoff notices: every handoff in (from, to) in every
   * schedule, oldest first. The handoff-notice job (services/paging/
   * handoff-notices.ts) asks for its look-back window on every pass and tells
   * `toUser` "on call for <schedule> until <next handoff>" and `fromUser` that
   * their shift ended.
   */
  async allHandoffsBetween(from: Date, to: Date): Promise<{ schedule: Schedule; handoff: HandoffNotice }[]> {
    const result: { schedule: Schedule; handoff: HandoffNotice }[] = [];
    for (const schedule of await this.list()) {
      for (const handoff of await this.handoffsBetween(schedule.id, from, to))
        result.push({ schedule, handoff });
    }
    return result.sort((a, b) => a.handoff.at.getTime() - b.handoff.at.getTime());
  }

  /** The effective schedule over a window (`from` defaults to now, `to` to `from` + 7 days). */
  async timeline(ref: ScheduleRef, window: { from?: string; to?: string }): Promise<TimelineSegment[]> {
    const schedule = await this.#find(this.#db, ref);
    const [from, to] = this.#window(window, 7);
    return this.#timeline(this.#db, schedule, from, to);
  }

  /** Timeline of `ref` over epoch-ms [from, to), for the day API of `ScheduleService`. */
  async timelineBetween(
    ref: ScheduleRef,
    from: number,
    to: number,
  ): Promise<{
    schedule: Schedule;
    segments: TimelineSegment[];
    overrides: Map<number, OverrideRow>;
    rotations: Map<number, RotationRow>;
  }> {
    const schedule = await this.#find(this.#db, ref);
    const { segments, rotationRows, overrideRows } = await this.#timelineWithRows(
      this.#db,
      schedule,
      from,
      to,
    );
    return {
      schedule,
      segments,
      overrides: new Map(overrideRows.map((row) => [row.id, row])),
      rotations: new Map(rotationRows.map((row) => [row.id, row])),
    };
  }

  /** The resolved default schedule. */
  async defaultSchedule(db: Queryable = this.#db): Promise<Schedule> {
    return this.#find(db, 'default');
  }

  // ---- calendar feeds ------------------------------------------------------

  /**
   * Gives schedule `id` a feed with a new secret (the old URL stops working)
   * and returns its URL: the only time the secret is shown.
   */
  async rotateScheduleFeed(
    principal: Principal,
    scheduleId: number,
    request: { clientAddress: string; origin: string },
  ): Promise<{ url: string }> {
    const clientAddress = request.clientAddress;
    requireAdmin(principal, 'manage schedule feeds');
    return this.#db.transaction(async (tx) => {
      await this.#find(tx, scheduleId);
      const url = await this.#newFeed(tx, { scheduleId }, request.origin);
      await this.#record(tx, principal, 'schedule.feed_rotated', scheduleId, {}, clientAddress);
      return { url };
    });
  }

  /** A person's feed (their shifts in every schedule): the person or an admin. */
  async rotatePersonFeed(
    principal: Principal,
    userId: number,
    request: { clientAddress: string; origin: string },
  ): Promise<{ url: string }> {
    const clientAddress = request.clientAddress;
    requireSelfOrAdmin(principal, userId, 'manage calendar feeds');
    return this.#db.transaction(async (tx) => {
      await requirePerson(tx, userId, 'id', true);
      const url = await this.#newFeed(tx, { userId }, request.origin);
      await this.#audit.record(tx, {
        actor: principal,
        action: 'schedule.person_feed_rotated',
        target: `user:${userId}`,
        clientAddress,
      });
      return { url };
    });
  }

  /** Turns a feed off; 404 when there is none. */
  async deleteFeed(
    principal: Principal,
    owner: { scheduleId: number } | { userId: number },
    clientAddress: string,
  ): Promise<void> {
    if ('scheduleId' in owner) requireAdmin(principal, 'manage schedule feeds');
    else requireSelfOrAdmin(principal, owner.userId, 'manage calendar feeds');
    await this.#db.transaction(async (tx) => {
      if (!(await deleteFeed(tx, owner))) throw notFound('calendar feed');
      await this.#audit.record(tx, {
        actor: principal,
        action: 'schedule.feed_deleted',
        target: 'scheduleId' in owner ? `schedule:${owner.scheduleId}` : `user:${owner.userId}`,
        clientAddress,
      });
    });
  }

  /**
   * The iCalendar text of feed `token` (`<id>-<secret>`, as in the URL). A
   * wrong or unknown token is 404 with one message either way, and the
   * secret is compared in constant time against the stored hash.
   */
  async renderFeed(token: string): Promise<string> {
    const unknown = new ApiError(404, 'no such calendar feed; ask for a new feed URL');
    const match = /^(\d{1,15})-([0-9a-f]{64})$/.exec(token);
    if (!match) throw unknown;
    const feed = await findFeed(this.#db, Number(match[1]));
    if (!feed || !secretsEqual(hashApiKey(match[2]!), feed.secret_hash)) throw unknown;
    // A deleted person's feed is a credential of a deleted account (deleting them removes it too).
    const person = feed.user_id !== null ? await findPersonById(this.#db, feed.user_id) : undefined;
    if (feed.user_id !== null && !person) throw unknown;
    const now = this.#clock.now().getTime();
    const from = now - FEED_DAYS_BEFORE * DAY_MS;
    const to = now + FEED_DAYS_AFTER * DAY_MS;
    let margin = LOOK_AHEAD_DAYS * DAY_MS;
    const events: CalendarEvent[] = [];
    const scheduleIds =
      feed.schedule_id !== null ? [feed.schedule_id] : await schedulesOfPerson(this.#db, feed.user_id!);
    const uidDomain = await this.#uidDomain();
    let calendarName = '';
    let zone = this.#serverZone;
    for (const scheduleId of scheduleIds) {
      const schedule = await this.#find(this.#db, scheduleId);
      if (feed.schedule_id !== null) {
        calendarName = `On call: ${schedule.name}`;
        zone = schedule.time_zone;
      }
      const whole = await this.#wholeShifts(schedule, from, to);
      margin = Math.max(margin, whole.margin);
      const segments = whole.segments;
      for (const segment of segments) {
        const [start, end] = [segment.start.getTime(), segment.end.getTime()];
        if (segment.userId === null || end <= from || start >= to) continue;
        if (feed.user_id !== null && segment.userId !== feed.user_id) continue;
        const who = segment.username ?? `user ${segment.userId}`;
        const how =
          segment.source.kind === 'rotation' ? `rotation ${segment.rotationName ?? ''}` : 'an override';
        events.push({
          uid: `schedule-${schedule.id}-${start}-user-${segment.userId}@${uidDomain}`,
          start,
          end,
          timeZone: schedule.time_zone,
          summary: feed.user_id !== null ? `On call: ${schedule.name}` : `${who} on call (${schedule.name})`,
          description: `${who} is on call for ${schedule.name} (${how}).`,
        });
      }
    }
    if (person) calendarName = `On call: ${person.username}`;
    events.sort((a, b) => a.start - b.start);
    return renderCalendar({
      name: calendarName,
      timeZone: zone,
      events,
      now,
      from: from - margin,
      to: to + margin,
    });
  }

  /**
   * The timeline around [from, to), computed with a margin wide enough that
   * the shifts reaching into the window keep their real handoff times
   * instead of being cut at the margin's edge: a calendar shows each shift
   * with its own start and end, and a feed read again must show the same
   * event (its UID names the start). Shifts and overrides can last a year,
   * so the margin widens until no shift in the window touches its edge.
   */
  async #wholeShifts(
    schedule: Schedule,
    from: number,
    to: number,
  ): Promise<{ segments: TimelineSegment[]; margin: number }> {
    const longest = (MAX_WINDOW_DAYS + 1) * DAY_MS;
    for (let margin = LOOK_AHEAD_DAYS * DAY_MS; ; margin = Math.min(4 * margin, longest)) {
      const segments = await this.#timeline(this.#db, schedule, from - margin, to + margin);
      const cut = segments.some(
        (segment) =>
          segment.userId !== null &&
          ((segment.start.getTime() <= from - margin && segment.end.getTime() > from) ||
            (segment.end.getTime() >= to + margin && segment.start.getTime() < to)),
      );
      if (!cut || margin >= longest) return { segments, margin };
    }
  }

  /** `origin` (from the request) is used only when TERDUT_PUBLIC_URL is not set. */
  async #newFeed(
    tx: Queryable,
    owner: { scheduleId: number } | { userId: number },
    origin: string,
  ): Promise<string> {
    // The same 256-bit secrets as API keys; the URL is the credential.
    const secret = generateApiKey();
    const id = await replaceFeed(tx, owner, hashApiKey(secret), this.#clock.now());
    return `${this.#publicUrl ?? origin}/api/calendar/${id}-${secret}.ics`;
  }

  // ---- internals -----------------------------------------------------------

  /** Who is on call in `schedule` at `at`, with their name: one instant, as `onCallUserAt`. */
  async #personOnCallAt(db: Queryable, schedule: Schedule, at: Date): Promise<OnCallPerson> {
    const spec = await this.#spec(db, schedule, at.getTime(), at.getTime() + 1);
    const { userId } = effectiveOnCallAt(spec, at.getTime());
    return { userId, username: userId === null ? null : (namesIn(spec).get(userId) ?? null) };
  }

  #resolve(row: ScheduleRow): Schedule {
    return {
      ...row,
      time_zone: row.time_zone ?? this.#serverZone,
      time_zone_from_config: row.time_zone === null,
    };
  }

  async #find(db: Queryable, ref: ScheduleRef): Promise<Schedule> {
    const row = ref === 'default' ? await findDefaultSchedule(db) : await findSchedule(db, ref);
    if (!row) throw notFound(ref === 'default' ? 'default schedule' : `schedule ${ref}`);
    return this.#resolve(row);
  }

  /** [from, to) in epoch ms from optional RFC 3339 query fields; 400 naming the field. */
  #window(window: { from?: string; to?: string }, defaultDays: number): [number, number] {
    const from =
      window.from === undefined
        ? this.#clock.now().getTime()
        : scheduleInstantField('from', window.from).getTime();
    const to =
      window.to === undefined ? from + defaultDays * DAY_MS : scheduleInstantField('to', window.to).getTime();
    if (to <= from) throw badRequest(`query field "to" (${window.to}) must be after "from"`);
    if (to - from > MAX_WINDOW_DAYS * DAY_MS) {
      throw badRequest(`query fields "from" and "to" span more than ${MAX_WINDOW_DAYS} days; ask for less`);
    }
    return [from, to];
  }

  /** Overrides touching [from, to) with their instants in the schedule's zone. */
  async #overrides(
    db: Queryable,
    schedule: Schedule,
    from: number,
    to: number,
  ): Promise<{ row: OverrideRow; start: number; end: number }[]> {
    const rows = await listOverridesNear(db, schedule.id, {
      from: new Date(from),
      to: new Date(to),
      fromDay: localDateOf(from, schedule.time_zone),
      toDay: localDateOf(to, schedule.time_zone),
    });
    return rows
      .map((row) =>
        row.day === null
          ? { row, start: row.starts_at!.getTime(), end: row.ends_at!.getTime() }
          : {
              row,
              start: startOfLocalDay(row.day, schedule.time_zone),
              end: startOfLocalDay(addDays(row.day, 1), schedule.time_zone),
            },
      )
      .filter((entry) => entry.start < to && entry.end > from);
  }

  async #spec(
    db: Queryable,
    schedule: Schedule,
    from: number,
    to: number,
  ): Promise<ScheduleSpec & { rotationRows: RotationRow[]; overrideRows: OverrideRow[] }> {
    const rotations = await listRotations(db, schedule.id);
    const overrides = await this.#overrides(db, schedule, from, to);
    return {
      timeZone: schedule.time_zone,
      rotationRows: rotations,
      overrideRows: overrides.map((entry) => entry.row),
      rotations: rotations.map((row) => ({
        id: row.id,
        name: row.name,
        layer: row.layer,
        participants: row.participants.map((p) => (p.deleted ? null : p.user_id)),
        shiftLength: row.shift_length,
        shiftUnit: row.shift_unit,
        startDate: row.start_date,
        handoffTime: row.handoff_time,
        ...(row.end_date === null ? {} : { endDate: row.end_date }),
        ...(row.restrict_weekdays === null && row.restrict_from === null
          ? {}
          : {
              restriction: {
                ...(row.restrict_weekdays === null ? {} : { weekdays: row.restrict_weekdays }),
                ...(row.restrict_from === null || row.restrict_to === null
                  ? {}
                  : { from: row.restrict_from, to: row.restrict_to }),
              },
            }),
      })),
      overrides: overrides.map((entry) => ({
        id: entry.row.id,
        userId: entry.row.user_id,
        start: entry.start,
        end: entry.end,
      })),
    };
  }

  async #timeline(db: Queryable, schedule: Schedule, from: number, to: number): Promise<TimelineSegment[]> {
    return (await this.#timelineWithRows(db, schedule, from, to)).segments;
  }

  /**
   * The timeline with the rotation and override rows it was computed from
   * (one read of each), so callers that show those rows see the same state.
   */
  async #timelineWithRows(db: Queryable, schedule: Schedule, from: number, to: number) {
    const spec = await this.#spec(db, schedule, from, to);
    const names = namesIn(spec);
    const rotationNames = new Map(spec.rotationRows.map((row) => [row.id, row.name]));
    const segments: TimelineSegment[] = timeline(spec, from, to).map((segment) => ({
      start: new Date(segment.start),
      end: new Date(segment.end),
      userId: segment.userId,
      username: segment.userId === null ? null : (names.get(segment.userId) ?? null),
      source: segment.source,
      ...(segment.source.kind === 'rotation'
        ? { rotationName: rotationNames.get(segment.source.rotationId)! }
        : {}),
    }));
    return { segments, rotationRows: spec.rotationRows, overrideRows: spec.overrideRows };
  }

  async #record(
    tx: Queryable,
    principal: Principal,
    action: string,
    scheduleId: number,
    detail: Record<string, unknown>,
    clientAddress: string,
  ): Promise<void> {
    await this.#audit.record(tx, {
      actor: principal,
      action,
      target: `schedule:${scheduleId}`,
      detail,
      clientAddress,
    });
  }
}

/**
 * Takes override `overrideId` of schedule `scheduleId` back, as both APIs'
 * DELETE do: one running at `at` ends then, so its past stays the record of
 * who was on call (and paged); one not begun, already over, or a whole-day
 * entry is deleted. Returns the audit action and detail to record, or
 * undefined when the schedule has no such override.
 *
 * @example await takeBackOverride(tx, 2, 17, now) // { action: 'schedule.override_ended', detail: { override_id: 17, ends_at: '…' } }
 */
export async function takeBackOverride(
  tx: Queryable,
  scheduleId: number,
  overrideId: number,
  at: Date,
): Promise<{ action: string; detail: Record<string, unknown> } | undefined> {
  if (await endOverrideAt(tx, scheduleId, overrideId, at)) {
    return {
      action: 'schedule.override_ended',
      detail: { override_id: overrideId, ends_at: at.toISOString() },
    };
  }
  if (await deleteOverride(tx, scheduleId, overrideId)) {
    return { action: 'schedule.override_deleted', detail: { override_id: overrideId } };
  }
  return undefined;
}

/**
 * The instant in schedule field `field`, or 400 naming the field: RFC 3339 as
 * every instant of the API, from EARLIEST_DATE up to (not including) LATEST_DATE.
 *
 * @example scheduleInstantField('at', '0000-01-01T00:00:00Z') // throws 400 naming "at"
 */
export function scheduleInstantField(field: string, text: string): Date {
  const at = instantField(field, text);
  if (at.getTime() < EARLIEST_MS || at.getTime() >= LATEST_MS) {
    throw badRequest(
      `field "${field}" (${text.slice(0, 40)}) must be from ${EARLIEST_DATE} up to ${LATEST_DATE}`,
    );
  }
  return at;
}

/**
 * The refusal of deleting a schedule that policies page, naming each policy
 * and its steps: "schedule Payments is paged by policy 'DB team' step 2; …".
 */
function scheduleStillPaged(name: string, steps: StepPagingSchedule[]): string {
  const byPolicy = new Map<number, { name: string; steps: number[] }>();
  for (const { policy_id, policy_name, step } of steps) {
    const policy = byPolicy.get(policy_id) ?? { name: policy_name, steps: [] };
    policy.steps.push(step);
    byPolicy.set(policy_id, policy);
  }
  const policies = [...byPolicy.values()].map(({ name: policy, steps: numbers }) => {
    const last = numbers.at(-1)!;
    const listed =
      numbers.length === 1 ? `step ${last}` : `steps ${numbers.slice(0, -1).join(', ')} and ${last}`;
    return `policy '${policy}' ${listed}`;
  });
  return `schedule ${name} is paged by ${policies.join(', ')}; change those steps first (PUT /api/escalation-policies/{id}), then delete the schedule`;
}

function scheduleName(text: string): string {
  const name = text.trim();
  if (name.length === 0 || name.length > 100) {
    throw badRequest('field "name" must be 1 to 100 characters (not only spaces)');
  }
  return name;
}

function timeZoneField(text: string): string {
  const zone = canonicalTimeZone(text);
  if (zone === undefined) {
    throw badRequest(
      `field "time_zone" is not an IANA time zone: "${text}"; use a name like "Europe/Berlin"`,
    );
  }
  return zone;
}

async function uniqueName<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict(`a schedule named "${name}" already exists; choose another name`);
    throw error;
  }
}

async function requirePerson(db: Queryable, userId: number, field: string, isPath = false): Promise<void> {
  if (await findPersonById(db, userId)) return;
  const user = await findUserById(db, userId);
  if (user)
    throw badRequest(`field "${field}": user ${userId} is a service account; only people can be on call`);
  throw isPath ? notFound(`user ${userId}`) : notFound(`user ${userId} (field "${field}")`);
}

function rotationFields(input: RotationInput): Omit<RotationFields, 'layer'> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) {
    throw badRequest('field "name" must be 1 to 100 characters (not only spaces)');
  }
  if (input.participant_ids.length === 0) {
    throw badRequest('field "participant_ids" must list at least one person, in rotation order');
  }
  if (input.shift_length > MAX_SHIFT[input.shift_unit]) {
    throw badRequest(
      `field "shift_length" may be at most ${MAX_SHIFT[input.shift_unit]} ${input.shift_unit}`,
    );
  }
  if (!isCalendarDate(input.start_date)) {
    throw badRequest(`field "start_date" is not a date in YYYY-MM-DD form: "${input.start_date}"`);
  }
  if (parseTimeOfDay(input.handoff_time) === undefined) {
    throw badRequest(timeOfDayError('handoff_time', input.handoff_time));
  }
  if (input.end_date !== undefined) {
    if (!isCalendarDate(input.end_date)) {
      throw badRequest(`field "end_date" is not a date in YYYY-MM-DD form: "${input.end_date}"`);
    }
    if (input.end_date <= input.start_date) {
      throw badRequest(
        `field "end_date" (${input.end_date}) must be after "start_date" (${input.start_date}); leave it out for a rotation without end`,
      );
    }
  }
  const restriction = input.restriction;
  let weekdays: number[] | null = null;
  let from: string | null = null;
  let to: string | null = null;
  if (restriction) {
    if (restriction.weekdays !== undefined) {
      weekdays = [...new Set(restriction.weekdays)].sort();
      if (weekdays.length === 0)
        throw badRequest('field "restriction.weekdays" must list at least one day (1 = Monday … 7 = Sunday)');
    }
    if ((restriction.from === undefined) !== (restriction.to === undefined)) {
      throw badRequest('fields "restriction.from" and "restriction.to" go together; give both or neither');
    }
    if (restriction.from !== undefined && restriction.to !== undefined) {
      for (const [field, value] of [
        ['from', restriction.from],
        ['to', restriction.to],
      ] as const) {
        if (parseTimeOfDay(value) === undefined) {
          throw badRequest(timeOfDayError(`restriction.${field}`, value));
        }
      }
      if (restriction.from === restriction.to) {
        throw badRequest(
          'fields "restriction.from" and "restriction.to" are equal; leave both out for the whole day',
        );
      }
      from = restriction.from;
      to = restriction.to;
    }
  }
  return {
    name,
    shiftLength: input.shift_length,
    shiftUnit: input.shift_unit,
    startDate: input.start_date,
    handoffTime: input.handoff_time,
    endDate: input.end_date ?? null,
    weekdays,
    from,
    to,
    participantIds: input.participant_ids,
  };
}

/** Why `value` is no `HH:MM` time of day; `24:00` is midnight's other name, which we spell `00:00`. */
function timeOfDayError(field: string, value: string): string {
  const midnight = value === '24:00' ? '; for midnight use 00:00' : '';
  return `field "${field}" is not a time of day from 00:00 to 23:59 in HH:MM form: "${value}"${midnight}`;
}

/** Usernames of everyone in the loaded rows (participants and overrides). */
function namesIn(spec: { rotationRows: RotationRow[]; overrideRows: OverrideRow[] }): Map<number, string> {
  const names = new Map<number, string>();
  for (const rotation of spec.rotationRows) {
    for (const participant of rotation.participants) names.set(participant.user_id, participant.username);
  }
  for (const override of spec.overrideRows) names.set(override.user_id, override.username);
  return names;
}

/**
 * Paging's on-call seam (`OnCallLookup` in services/paging/on-call.ts:
 * `(db, at) => user ids`), answered by schedule `ref` (the default, or a
 * step's `{ type: 'on_call', schedule_id }`).
 *
 * @example const lookup = scheduleOnCallLookup(services.schedules); // the default schedule
 */
export function scheduleOnCallLookup(
  schedules: SchedulesService,
  ref: ScheduleRef = 'default',
): (db: Queryable, at: Date) => Promise<number[]> {
  return async (db, at) => {
    const userId = await schedules.onCallUserAt(ref, at, db);
    return userId === null ? [] : [userId];
  };
}
