/**
 * Handoff notices (issue 13): when a shift starts, the new person is told
 * "On call for Databases until Mon 09:00" through their contact methods, and
 * the person before that their shift ended.
 *
 * Every replica runs `runOnce` every 30s. Each pass looks at the handoffs of
 * the last HANDOFF_LOOK_BACK_MS (so a pass missed in a restart is made up)
 * and claims each notice in the database (PagingService.queueHandoffNotice:
 * a unique key per schedule, handoff instant, person and kind), so however
 * many replicas and passes see a handoff, it is told once. The messages then
 * go through the paging outbox, with its retries and providers. A handoff
 * older than the look-back is never told: after downtime, nobody gets a
 * flood of stale "you are on call" messages.
 *
 * A change to a schedule that moves who is on call now (an override from an
 * hour ago, a rotation edited, today given away) is a handoff at the moment
 * it is saved, though the timeline shows the new person from earlier: the
 * passes cannot see it (no handoff in their window), so the change itself
 * claims its notices, in its own transaction (`changed`, through
 * SchedulesService.change): told once, or not at all if it rolls back.
 */
import type { Clock } from '../../clock.ts';
import type { Queryable } from '../../db/database.ts';
import type {
  HandoffNotice,
  OnCallChange,
  OnCallChangeListener,
  Schedule,
  SchedulesService,
} from '../schedules.ts';
import type { NewHandoffNotice } from '../../repositories/handoff-notices.ts';
import type { PagingService } from './paging.ts';
import { wallTimeOccursTwice } from '../schedule-timeline.ts';

/** How far back each pass looks: longer than a restart, short enough that a notice is still news. */
export const HANDOFF_LOOK_BACK_MS = 15 * 60_000;
export const HANDOFF_INTERVAL_MS = 30_000;
const WEEK_MS = 7 * 86_400_000;

export class HandoffNoticeService implements OnCallChangeListener {
  readonly #clock: Clock;
  readonly #schedules: SchedulesService;
  readonly #paging: PagingService;
  readonly #onClaimed: (() => void) | undefined;

  /** `onClaimed`: send at once rather than at the next paging poll (a serving process). */
  constructor(deps: {
    clock: Clock;
    schedules: SchedulesService;
    paging: PagingService;
    onClaimed?: () => void;
  }) {
    this.#clock = deps.clock;
    this.#schedules = deps.schedules;
    this.#paging = deps.paging;
    this.#onClaimed = deps.onClaimed;
  }

  /** One pass; returns how many notices this pass claimed (0 when others had them). */
  async runOnce(): Promise<number> {
    const now = this.#clock.now().getTime();
    // (from, to) is open: +1 ms takes in a handoff at this very instant.
    const found = await this.#schedules.allHandoffsBetween(
      new Date(now - HANDOFF_LOOK_BACK_MS),
      new Date(now + 1),
    );
    let claimed = 0;
    for (const { schedule, handoff } of found) {
      for (const notice of await this.#notices(schedule, handoff)) {
        if (await this.#paging.queueHandoffNotice(notice)) claimed += 1;
      }
    }
    if (claimed > 0) this.#onClaimed?.();
    return claimed;
  }

  /**
   * Claims the notices of `change` in `tx`, the change's transaction: the
   * person on call now is told their shift started, the one relieved that
   * theirs ended. When the new person's stretch began within the look-back
   * (an override from a minute ago), the timeline has that handoff too and
   * the passes would tell it: the notices then take its instant, so the
   * unique key tells each once. When the new person was already told under
   * that instant, it was for a stretch this change brings back (an edit
   * taken back at once): then both are told under the change's own instant.
   * True when any was claimed.
   */
  async changed(tx: Queryable, change: OnCallChange): Promise<boolean> {
    const { schedule, at } = change;
    const recent = await this.#schedules.handoffsBetween(
      schedule.id,
      new Date(at.getTime() - HANDOFF_LOOK_BACK_MS),
      new Date(at.getTime() + 1),
      tx,
    );
    const last = recent.at(-1);
    let handoff: HandoffNotice = {
      at: last !== undefined && last.toUserId === change.to.userId ? last.at : at,
      fromUserId: change.from.userId,
      fromUsername: change.from.username,
      toUserId: change.to.userId,
      toUsername: change.to.username,
    };
    let claimed = false;
    for (const kind of ['started', 'ended'] as const) {
      for (;;) {
        const notice = (await this.#notices(schedule, handoff, tx)).find((each) => each.kind === kind);
        if (notice === undefined) break;
        if (await this.#paging.queueHandoffNotice(notice, tx)) {
          claimed = true;
          break;
        }
        if (handoff.at.getTime() === at.getTime()) break; // told already: two changes at one instant
        handoff = { ...handoff, at };
      }
    }
    return claimed;
  }

  /** After a change's notices committed: send them now (a serving process) rather than at the next paging poll. */
  committed(): void {
    this.#onClaimed?.();
  }

  async #notices(schedule: Schedule, handoff: HandoffNotice, db?: Queryable): Promise<NewHandoffNotice[]> {
    const notices: NewHandoffNotice[] = [];
    const base = {
      version: '1',
      event: 'handoff',
      schedule: { id: schedule.id, name: schedule.name, time_zone: schedule.time_zone },
      at: handoff.at.toISOString(),
    };
    const next = handoff.toUsername ?? 'nobody';
    if (handoff.toUserId !== null) {
      const { until } = await this.#schedules.onCallAt(schedule.id, handoff.at, db);
      const title =
        until === undefined
          ? `On call for ${schedule.name}`
          : `On call for ${schedule.name} until ${localTime(until, handoff.at, schedule.time_zone)}`;
      notices.push({
        schedule_id: schedule.id,
        handoff_at: handoff.at,
        user_id: handoff.toUserId,
        kind: 'started',
        title,
        body:
          `Your on-call shift for ${schedule.name} started${handoff.fromUsername ? ` (from ${handoff.fromUsername})` : ''}` +
          (until === undefined
            ? '; no handoff is planned in the next two months.'
            : ` and runs until ${localTime(until, handoff.at, schedule.time_zone)} (${schedule.time_zone}).`),
        webhook_body: {
          ...base,
          kind: 'started',
          ...(until === undefined ? {} : { until: until.toISOString() }),
          person: { id: handoff.toUserId, username: handoff.toUsername },
        },
      });
    }
    if (handoff.fromUserId !== null) {
      notices.push({
        schedule_id: schedule.id,
        handoff_at: handoff.at,
        user_id: handoff.fromUserId,
        kind: 'ended',
        title: `Your on-call shift for ${schedule.name} ended`,
        body: `Your on-call shift for ${schedule.name} ended; ${next} is on call now.`,
        webhook_body: {
          ...base,
          kind: 'ended',
          next: handoff.toUserId === null ? null : { id: handoff.toUserId, username: handoff.toUsername },
          person: { id: handoff.fromUserId, username: handoff.fromUsername },
        },
      });
    }
    return notices;
  }
}

/**
 * `Mon 09:00` in the schedule's zone (a weekly shift ends on the weekday it
 * started, read as "next Monday"); with the date (`Mon 14 Dec, 09:00`) when
 * further than a week (and a DST hour) away; with the zone's abbreviation
 * (`Sun 02:30 CEST`) when the autumn change makes that time occur twice.
 */
function localTime(at: Date, from: Date, timeZone: string): string {
  const far = at.getTime() - from.getTime() > WEEK_MS + 3_600_000;
  const text = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    ...(far ? { day: 'numeric', month: 'short' } : {}),
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
  if (!wallTimeOccursTwice(at.getTime(), timeZone)) return text;
  const zoneName = zoneAbbreviation(at, timeZone);
  return zoneName === undefined ? text : `${text} ${zoneName}`;
}

/**
 * The zone's short name at `at` as people there write it: British English
 * knows Europe's (CEST) and writes America's as an offset (GMT-4), American
 * English the other way round (EDT, GMT+2); the first that is a name wins,
 * else the offset.
 *
 * @example zoneAbbreviation(new Date('2026-11-01T05:30:00Z'), 'America/New_York') // 'EDT'
 */
export function zoneAbbreviation(at: Date, timeZone: string): string | undefined {
  let offset: string | undefined;
  for (const locale of ['en-GB', 'en-US']) {
    const name = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' })
      .formatToParts(at)
      .find((part) => part.type === 'timeZoneName')?.value;
    if (name !== undefined && !/^(GMT|UTC)([+-]|$)/.test(name)) return name;
    offset ??= name;
  }
  return offset;
}
