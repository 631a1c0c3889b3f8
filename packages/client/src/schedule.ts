import { TerdutApiError, type HttpTransport } from './http.ts';
import type {
  CalendarFeed,
  OnCall,
  OnCallNow,
  Override,
  OverrideInput,
  Rotation,
  RotationInput,
  Schedule,
  ScheduleCreate,
  ScheduleEntry,
  TimelineSegment,
  WindowQuery,
} from '@terdut/contract';

export type {
  OnCall,
  OnCallSourceKind,
  Override,
  Rotation,
  RotationInput,
  RotationRestriction,
  Schedule,
  ScheduleEntry,
  ShiftUnit,
  TimelineSegment,
} from '@terdut/contract';

/** `/api/schedule`: reads for everyone, changes for admins. */
export class ScheduleApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  /**
   * Entries from `from` to `to` (inclusive, `YYYY-MM-DD`), oldest first. The
   * server defaults `from` to today and `to` to `from` + 30 days.
   */
  async list(range: { from?: string; to?: string } = {}): Promise<ScheduleEntry[]> {
    return this.#http.request('GET', '/api/schedule', { query: { from: range.from, to: range.to } });
  }

  /** Today's entry, or undefined when no one is on call today (a normal state, 404 on the wire). */
  async current(): Promise<ScheduleEntry | undefined> {
    try {
      return await this.#http.request<ScheduleEntry>('GET', '/api/schedule/current');
    } catch (error) {
      if (error instanceof TerdutApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /**
   * Puts `userId` on call on `dates`, all or nothing. Days someone else holds
   * fail with TerdutApiError 409 unless `replace`.
   */
  async assign(
    userId: number,
    dates: string[],
    options: { replace?: boolean } = {},
  ): Promise<ScheduleEntry[]> {
    return this.#http.request('POST', '/api/schedule', {
      body: {
        user_id: userId,
        dates,
        ...(options.replace === undefined ? {} : { replace: options.replace }),
      },
    });
  }

  async delete(entryId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/schedule/${entryId}`);
  }
}

/** `/api/schedules`: several schedules, rotations, overrides, on-call, feeds. */
export class SchedulesApi {
  readonly #http: HttpTransport;

  constructor(http: HttpTransport) {
    this.#http = http;
  }

  async list(): Promise<Schedule[]> {
    return this.#http.request('GET', '/api/schedules');
  }

  /** One schedule with its rotations, highest layer first. */
  async get(id: number): Promise<Schedule> {
    return this.#http.request('GET', `/api/schedules/${id}`);
  }

  async create(input: ScheduleCreate): Promise<Schedule> {
    return this.#http.request('POST', '/api/schedules', { body: input });
  }

  async update(
    id: number,
    input: { name?: string; time_zone?: string; is_default?: true },
  ): Promise<Schedule> {
    return this.#http.request('PATCH', `/api/schedules/${id}`, { body: input });
  }

  async delete(id: number): Promise<void> {
    await this.#http.request('DELETE', `/api/schedules/${id}`);
  }

  async addRotation(scheduleId: number, input: RotationInput): Promise<Rotation> {
    return this.#http.request('POST', `/api/schedules/${scheduleId}/rotations`, { body: input });
  }

  async replaceRotation(scheduleId: number, rotationId: number, input: RotationInput): Promise<Rotation> {
    return this.#http.request('PUT', `/api/schedules/${scheduleId}/rotations/${rotationId}`, { body: input });
  }

  async deleteRotation(scheduleId: number, rotationId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/schedules/${scheduleId}/rotations/${rotationId}`);
  }

  /** Overrides touching [from, to) (RFC 3339), oldest first. */
  async overrides(scheduleId: number, window: WindowQuery = {}): Promise<Override[]> {
    return this.#http.request('GET', `/api/schedules/${scheduleId}/overrides`, {
      query: { from: window.from, to: window.to },
    });
  }

  async addOverride(scheduleId: number, input: OverrideInput): Promise<Override> {
    return this.#http.request('POST', `/api/schedules/${scheduleId}/overrides`, { body: input });
  }

  async deleteOverride(scheduleId: number, overrideId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/schedules/${scheduleId}/overrides/${overrideId}`);
  }

  /** Who is on call at `at` (RFC 3339; default now). */
  async onCall(scheduleId: number, at?: string): Promise<OnCall> {
    return this.#http.request('GET', `/api/schedules/${scheduleId}/on-call`, { query: { at } });
  }

  /** Who is on call now, and who is next. */
  async now(scheduleId: number): Promise<OnCallNow> {
    return this.#http.request('GET', `/api/schedules/${scheduleId}/now`);
  }

  async timeline(scheduleId: number, window: WindowQuery = {}): Promise<TimelineSegment[]> {
    return this.#http.request('GET', `/api/schedules/${scheduleId}/timeline`, {
      query: { from: window.from, to: window.to },
    });
  }

  /** A new secret feed URL for the schedule; the previous URL stops working. */
  async rotateFeed(scheduleId: number): Promise<CalendarFeed> {
    return this.#http.request('POST', `/api/schedules/${scheduleId}/feed`);
  }

  async deleteFeed(scheduleId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/schedules/${scheduleId}/feed`);
  }

  /** A new secret feed URL with a person's shifts in every schedule. */
  async rotatePersonFeed(userId: number): Promise<CalendarFeed> {
    return this.#http.request('POST', `/api/users/${userId}/calendar-feed`);
  }

  async deletePersonFeed(userId: number): Promise<void> {
    await this.#http.request('DELETE', `/api/users/${userId}/calendar-feed`);
  }
}
