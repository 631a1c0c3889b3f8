import { TerdutApiError, type HttpTransport } from './http.ts';
import type { ScheduleEntry } from '@terdut/contract';

export type { ScheduleEntry } from '@terdut/contract';

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
