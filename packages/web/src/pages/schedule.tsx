import { useState } from 'preact/hooks';
import type { ScheduleEntry } from '@terdut/client';
import { api, client, errorText, TerdutApiError } from '../api.ts';
import { Link, useLocation } from '../router.tsx';
import { useLive } from '../live.ts';
import { Button, ErrorNote, Page, todayIn, useAction, useData, useSession } from '../ui.tsx';

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** Calendar arithmetic on `YYYY-MM-DD` strings (plain dates: no zone, no daylight saving). */
function addDays(date: string, days: number): string {
  const value = new Date(`${date}T00:00:00Z`);
  value.setUTCDate(value.getUTCDate() + days);
  return value.toISOString().slice(0, 10);
}
function weekdayIndex(date: string): number {
  return (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
}
function monthOf(date: string): string {
  return date.slice(0, 7);
}
function shiftMonth(month: string, by: number): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  const value = new Date(Date.UTC(year, number - 1 + by, 1));
  return value.toISOString().slice(0, 7);
}
function monthName(month: string): string {
  return new Date(`${month}-01T00:00:00Z`).toLocaleString('en', {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
}

/** Who is on call which day: a month in the server's zone, day-based assignments (admins change it). */
export function SchedulePage() {
  const { info, me } = useSession();
  const admin = me.user.role === 'admin';
  // Days are the default schedule's (README: "today" is the date in its zone, TERDUT_TIMEZONE
  // only until an admin gives it a zone of its own), as the server counts them.
  const schedules = useData(() => client.schedules.list(), []);
  const zone = schedules.data?.find((schedule) => schedule.is_default)?.time_zone ?? info.time_zone;
  const today = todayIn(zone);
  const { query } = useLocation();
  const asked = query.get('month') ?? '';
  // A link with a month that is not one (2026-13, 2026-00) shows this month instead of breaking the page.
  const month = /^\d{4}-(0[1-9]|1[0-2])$/.test(asked) ? asked : monthOf(today);
  const first = `${month}-01`;
  const gridStart = addDays(first, -weekdayIndex(first));
  const days = Array.from({ length: 42 }, (_, index) => addDays(gridStart, index));
  const entries = useData(() => client.schedule.list({ from: days[0], to: days[days.length - 1] }), [month]);
  const onCall = useData(() => client.schedule.current(), []);
  const people = useData(() => api.people(), []);
  useLive(
    (change) => change.topic === 'schedule',
    () => {
      entries.reload();
      onCall.reload();
      schedules.reload();
    },
  );
  // A day can have several people (a handoff that day, a daytime layer): each is shown.
  const byDate = new Map<string, ScheduleEntry[]>();
  for (const entry of entries.data ?? []) byDate.set(entry.date, [...(byDate.get(entry.date) ?? []), entry]);

  const [picked, setPicked] = useState<string[]>([]);
  const [person, setPerson] = useState(String(me.user.id));
  const [conflict, setConflict] = useState<string | undefined>(undefined);
  const action = useAction();
  const toggle = (date: string) =>
    setPicked((current) =>
      current.includes(date) ? current.filter((d) => d !== date) : [...current, date].sort(),
    );
  const weekOf = (monday: string) => Array.from({ length: 7 }, (_, index) => addDays(monday, index));
  /**
   * The server's 409 ends with what an API client should send ("replace": true); a person gets the
   * choice as the two buttons below it instead, so the prompt names the days and who holds them.
   */
  const conflictText = (error: TerdutApiError) => {
    const held = picked.flatMap((date) => {
      // Only a whole-day entry holds a day; a rotation's day is not held (the entry overrides it).
      const holders = (byDate.get(date) ?? []).filter(
        (entry) =>
          entry.rotation_id === undefined &&
          entry.override_id === undefined &&
          String(entry.user_id) !== person,
      );
      return holders.map((entry) => `${date} (${entry.username})`);
    });
    if (held.length > 0) {
      return `${held.length === 1 ? 'This day already has' : 'These days already have'} someone on call: ${held.join(', ')}. Replace them?`;
    }
    // Taken by someone since the page loaded: the server's text names the days.
    return errorText(error).replace(/; send "replace": true.*$/, '. Replace them?');
  };
  const assign = async (replace: boolean) => {
    setConflict(undefined);
    try {
      await client.schedule.assign(Number(person), picked, replace ? { replace: true } : {});
      setPicked([]);
      entries.reload();
      onCall.reload();
      action.clear();
    } catch (error) {
      if (error instanceof TerdutApiError && error.status === 409) setConflict(conflictText(error));
      else await action.run(() => Promise.reject(error instanceof Error ? error : new Error(String(error))));
    }
  };

  return (
    <Page title="Schedule">
      <p>
        On call today ({today}):{' '}
        <strong>{onCall.data ? onCall.data.username : onCall.loading ? '…' : 'no one'}</strong>. Days are
        calendar days in the default schedule's time zone, <strong>{zone}</strong>.{' '}
        <Link href="/schedules">All schedules, rotations and overrides</Link>
      </p>
      <div class="toolbar">
        <Link href={`/schedule?month=${shiftMonth(month, -1)}`}>← Previous month</Link>
        <h2 class="month">{monthName(month)}</h2>
        <Link href={`/schedule?month=${shiftMonth(month, 1)}`}>Next month →</Link>
      </div>
      <ErrorNote error={entries.error} />
      <div class="calendar" role="grid" aria-label={`On call in ${monthName(month)}`}>
        <div role="row" class="calendar-row head">
          {WEEKDAYS.map((day) => (
            <span role="columnheader" key={day}>
              {day}
            </span>
          ))}
        </div>
        {Array.from({ length: 6 }, (_, week) => (
          <div role="row" class="calendar-row" key={week}>
            {days.slice(week * 7, week * 7 + 7).map((date) => {
              const dayEntries = byDate.get(date) ?? [];
              const classes = [
                'day',
                monthOf(date) === month ? '' : 'other-month',
                date === today ? 'today' : '',
              ]
                .filter(Boolean)
                .join(' ');
              return (
                <div role="gridcell" class={classes} key={date} data-date={date}>
                  {admin ? (
                    <label class="day-pick">
                      <input
                        type="checkbox"
                        checked={picked.includes(date)}
                        onChange={() => toggle(date)}
                        aria-label={`Select ${date}`}
                      />
                      <span class="day-number">{Number(date.slice(8))}</span>
                    </label>
                  ) : (
                    <span class="day-number">{Number(date.slice(8))}</span>
                  )}
                  {dayEntries.map((entry) => (
                    <span class="on-call" key={entry.id}>
                      {entry.username}
                      {/* A rotation's day is not removed but overridden: select it and assign someone. */}
                      {admin && entry.rotation_id === undefined && (
                        <button
                          class="quiet small"
                          aria-label={`Remove ${entry.username} on ${date}`}
                          onClick={() =>
                            void action.run(() => client.schedule.delete(entry.id)).then(entries.reload)
                          }
                        >
                          ×
                        </button>
                      )}
                    </span>
                  ))}
                  {admin && weekdayIndex(date) === 0 && (
                    <button
                      class="quiet small week"
                      aria-label={`Select the week of ${date}`}
                      onClick={() => setPicked(weekOf(date))}
                    >
                      week
                    </button>
                  )}
                </div>
              );
            })}
          </div>
        ))}
      </div>
      {admin && (
        <form
          class="assign-days"
          onSubmit={(event) => {
            event.preventDefault();
            void assign(false);
          }}
        >
          <p>
            {picked.length === 0
              ? 'Select days (or a week) in the calendar, then choose who is on call.'
              : `${picked.length} day${picked.length === 1 ? '' : 's'} selected: ${picked.join(', ')}`}
          </p>
          {/* On a phone the calendar has no room for each week's button: a week is picked here. */}
          <label class="inline week-pick">
            Select a week
            <select
              aria-label="Select a week"
              value=""
              onChange={(event) => {
                const monday = event.currentTarget.value;
                if (monday !== '') setPicked(weekOf(monday));
              }}
            >
              <option value="">…</option>
              {days
                .filter((date) => weekdayIndex(date) === 0)
                .map((monday) => (
                  <option key={monday} value={monday}>
                    {`${monday} to ${addDays(monday, 6)}`}
                  </option>
                ))}
            </select>
          </label>
          <label class="inline">
            Person on call
            <select
              aria-label="Person on call"
              value={person}
              onChange={(event) => setPerson(event.currentTarget.value)}
            >
              {(people.data ?? [me.user]).map((candidate) => (
                <option key={candidate.id} value={String(candidate.id)}>
                  {candidate.username}
                </option>
              ))}
            </select>
          </label>
          <Button type="submit" class="primary" disabled={picked.length === 0}>
            Assign days
          </Button>
          {picked.length > 0 && (
            <button type="button" onClick={() => setPicked([])}>
              Clear selection
            </button>
          )}
          {conflict !== undefined && (
            <div class="confirm" role="alert">
              <p>{conflict}</p>
              <button type="button" class="danger" onClick={() => void assign(true)}>
                Replace them
              </button>
              <button type="button" onClick={() => setConflict(undefined)}>
                Keep the schedule
              </button>
            </div>
          )}
        </form>
      )}
      <ErrorNote error={action.error} />
    </Page>
  );
}
