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
 */
import type { Clock } from '../../clock.ts';
import type { HandoffNotice, Schedule, SchedulesService } from '../schedules.ts';
import type { NewHandoffNotice } from '../../repositories/handoff-notices.ts';
import type { PagingService } from './paging.ts';
import { wallTimeOccursTwice } from '../schedule-timeline.ts';

/** How far back each pass looks: longer than a restart, short enough that a notice is still news. */
export const HANDOFF_LOOK_BACK_MS = 15 * 60_000;
export const HANDOFF_INTERVAL_MS = 30_000;
const WEEK_MS = 7 * 86_400_000;

export class HandoffNoticeService {
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

  async #notices(schedule: Schedule, handoff: HandoffNotice): Promise<NewHandoffNotice[]> {
    const notices: NewHandoffNotice[] = [];
    const base = {
      version: '1',
      event: 'handoff',
      schedule: { id: schedule.id, name: schedule.name, time_zone: schedule.time_zone },
      at: handoff.at.toISOString(),
    };
    const next = handoff.toUsername ?? 'nobody';
    if (handoff.toUserId !== null) {
      const { until } = await this.#schedules.onCallAt(schedule.id, handoff.at);
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
