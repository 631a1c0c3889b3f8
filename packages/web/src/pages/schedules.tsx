import { useRef, useState } from 'preact/hooks';
import type { OnCall, Rotation, RotationInput, Schedule, ShiftUnit, TimelineSegment } from '@terdut/client';
import { api, client, type Person } from '../api.ts';
import { Link } from '../router.tsx';
import { useLive } from '../live.ts';
import { Button, ErrorNote, formatTime, Page, useAction, useData, useSession } from '../ui.tsx';
import { CalendarFeedPanel } from './feed.tsx';
import { wallTimeOccursTwice, wallTimeToIso, zoneAbbreviation } from '../zoned-time.ts';

const DAY_MS = 86_400_000;
const TIMELINE_DAYS = 14;
/** How far ahead the override list looks: the longest window the server lists (its default is 30 days). */
const OVERRIDE_DAYS = 366;
const ISO_WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** The instant as `YYYY-MM-DDTHH:MM` on `zone`'s wall clock, for a datetime-local input. */
function wallTimeOf(instant: number, zone: string): string {
  return formatTime(new Date(instant).toISOString(), zone).replace(' ', 'T');
}

/**
 * `Mon 2026-12-07 09:00` in `zone`; with the zone's name (`Sun 2026-10-25
 * 02:30 CEST`) when the autumn change makes that time occur twice, as the
 * handoff notices say it: a shift or override ending in that hour is
 * otherwise shown an hour off, or as lasting no time at all.
 */
function when(iso: string | undefined, zone: string): string {
  if (iso === undefined) return '';
  const instant = new Date(iso).getTime();
  const weekday = new Intl.DateTimeFormat('en', { timeZone: zone, weekday: 'short' }).format(instant);
  const text = `${weekday} ${formatTime(iso, zone)}`;
  return wallTimeOccursTwice(instant, zone) ? `${text} ${zoneAbbreviation(instant, zone)}` : text;
}

function knownZones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  return intl.supportedValuesOf?.('timeZone') ?? [];
}

function NowAndNext(props: { schedule: Schedule }) {
  const { id, time_zone: zone } = props.schedule;
  const now = useData(() => client.schedules.now(id), [id]);
  useLive((change) => change.topic === 'schedule', now.reload);
  if (now.error) return <ErrorNote error={now.error} />;
  if (!now.data) return <p class="muted">…</p>;
  const who = (on: OnCall | undefined) => on?.username ?? 'no one';
  return (
    <p>
      Now: <strong>{who(now.data.now)}</strong>
      {now.data.now.until && <> until {when(now.data.now.until, zone)}</>}
      {now.data.next && (
        <>
          {' '}
          · Next: <strong>{who(now.data.next)}</strong>
          {now.data.next.since && <> from {when(now.data.next.since, zone)}</>}
        </>
      )}
    </p>
  );
}

/** Every schedule with who is on call now and next; admins add one and choose the default. */
export function SchedulesPage() {
  const { me } = useSession();
  const admin = me.user.role === 'admin';
  const schedules = useData(() => client.schedules.list(), []);
  const [name, setName] = useState('');
  const [zone, setZone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  const action = useAction();
  return (
    <Page title="Schedules">
      <p>
        One schedule per team, each in its own time zone.{' '}
        <Link href="/schedule">The default schedule's month</Link> shows it day by day.
      </p>
      <ErrorNote error={schedules.error} />
      <ul class="cards">
        {(schedules.data ?? []).map((schedule) => (
          <li class="card" key={schedule.id}>
            <div class="row-main">
              <Link href={`/schedules/${schedule.id}`} class="title">
                {schedule.name}
              </Link>
              <span class="muted">{schedule.time_zone}</span>
              {schedule.is_default && <span class="badge">default</span>}
            </div>
            <NowAndNext schedule={schedule} />
            {admin && !schedule.is_default && (
              <div>
                <button
                  type="button"
                  class="small"
                  onClick={() =>
                    void action
                      .run(() => client.schedules.update(schedule.id, { is_default: true }))
                      .then(schedules.reload)
                  }
                >
                  Make {schedule.name} the default
                </button>
              </div>
            )}
          </li>
        ))}
        {schedules.data?.length === 0 && <li class="empty">No schedules yet.</li>}
      </ul>
      <ErrorNote error={action.error} />
      {admin && (
        <>
          <h2>New schedule</h2>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              void action.run(async () => {
                const created = await client.schedules.create({ name: name.trim(), time_zone: zone.trim() });
                setName('');
                schedules.reload();
                return created;
              });
            }}
          >
            <label>
              Schedule name
              <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
            </label>
            <label>
              Time zone (IANA, e.g. Europe/Berlin)
              <input
                required
                list="time-zones"
                value={zone}
                onInput={(event) => setZone(event.currentTarget.value)}
              />
            </label>
            <datalist id="time-zones">
              {knownZones().map((known) => (
                <option key={known} value={known} />
              ))}
            </datalist>
            <Button type="submit" class="primary" busy={action.busy}>
              Create schedule
            </Button>
          </form>
        </>
      )}
    </Page>
  );
}

/** A colour per person (the same person keeps one colour along the bar). */
function colourIndex(segment: TimelineSegment, people: number[]): number {
  if (segment.user_id === undefined) return -1;
  const index = people.indexOf(segment.user_id);
  return (index === -1 ? people.push(segment.user_id) - 1 : index) % 6;
}

function Timeline(props: { segments: TimelineSegment[]; zone: string; from: number; to: number }) {
  const total = props.to - props.from;
  const people: number[] = [];
  const coloured = props.segments.map((segment) => ({ segment, colour: colourIndex(segment, people) }));
  const source = (segment: TimelineSegment) =>
    segment.source === 'override'
      ? 'override'
      : segment.source === 'rotation'
        ? `rotation ${segment.rotation ?? ''}`.trim()
        : 'nobody on call';
  return (
    <>
      <div class="timeline-bar" aria-hidden="true">
        {coloured.map(({ segment, colour }) => {
          const start = Math.max(new Date(segment.start).getTime(), props.from);
          const end = Math.min(new Date(segment.end).getTime(), props.to);
          return (
            <span
              key={segment.start}
              class={`segment ${colour === -1 ? 'nobody' : `person-${colour}`}`}
              style={{ width: `${(Math.max(0, end - start) / total) * 100}%` }}
              title={`${segment.username ?? 'nobody'}: ${when(segment.start, props.zone)} – ${when(segment.end, props.zone)}`}
            >
              {segment.username ?? ''}
            </span>
          );
        })}
      </div>
      <ol class="plain segments" aria-label="Who is on call, in order">
        {coloured.map(({ segment, colour }) => (
          <li key={segment.start} class="segment-row">
            <span class={`swatch ${colour === -1 ? 'nobody' : `person-${colour}`}`} aria-hidden="true" />
            <span>
              <strong>{segment.username ?? 'no one'}</strong>{' '}
              <span class="muted">
                {when(segment.start, props.zone)} → {when(segment.end, props.zone)} · {source(segment)}
              </span>
            </span>
          </li>
        ))}
        {props.segments.length === 0 && <li class="empty">Nothing in this window.</li>}
      </ol>
    </>
  );
}

function describeRestriction(rotation: Rotation): string {
  const restriction = rotation.restriction;
  if (!restriction || (!restriction.weekdays?.length && !restriction.from && !restriction.to)) return 'none';
  const days = restriction.weekdays?.length
    ? restriction.weekdays.map((day) => ISO_WEEKDAYS[day - 1]).join(', ')
    : 'every day';
  const window =
    restriction.from || restriction.to ? ` ${restriction.from ?? ''}–${restriction.to ?? ''}` : '';
  return `${days}${window}`;
}

function plural(count: number, unit: ShiftUnit): string {
  const single = unit.slice(0, -1);
  return `${count} ${count === 1 ? single : unit}`;
}

/**
 * One place in a rotation's order. A person may hold several (A, B, A, C:
 * the server keeps the order as given), so a place is told apart by `key`,
 * made when the form adds it, not by who holds it.
 */
interface Place {
  key: number;
  userId: number;
}

/** Create or edit a rotation: people in order, shift, handoff, start, restrictions, layer. */
function RotationForm(props: {
  scheduleId: number;
  people: Person[];
  rotation?: Rotation;
  today: string;
  onDone: () => void;
}) {
  const existing = props.rotation;
  const [name, setName] = useState(existing?.name ?? '');
  const placesMade = useRef(0);
  const place = (userId: number): Place => ({ key: placesMade.current++, userId });
  const [participants, setParticipants] = useState<Place[]>(
    () => existing?.participants.map((participant) => place(participant.user_id)) ?? [],
  );
  const [candidate, setCandidate] = useState('');
  const [length, setLength] = useState(String(existing?.shift_length ?? 1));
  const [unit, setUnit] = useState<ShiftUnit>(existing?.shift_unit ?? 'weeks');
  const [startDate, setStartDate] = useState(existing?.start_date ?? props.today);
  const [handoff, setHandoff] = useState(existing?.handoff_time ?? '09:00');
  const [endDate, setEndDate] = useState(existing?.end_date ?? '');
  const [layer, setLayer] = useState(existing ? String(existing.layer) : '');
  const [weekdays, setWeekdays] = useState<number[]>(existing?.restriction?.weekdays ?? []);
  const [from, setFrom] = useState(existing?.restriction?.from ?? '');
  const [to, setTo] = useState(existing?.restriction?.to ?? '');
  const action = useAction();
  const nameOf = (id: number) =>
    props.people.find((person) => person.id === id)?.username ??
    existing?.participants.find((participant) => participant.user_id === id)?.username ??
    `#${id}`;

  const submit = () => {
    const input: RotationInput = {
      name: name.trim(),
      participant_ids: participants.map((participant) => participant.userId),
      shift_length: Number(length),
      shift_unit: unit,
      start_date: startDate,
      handoff_time: handoff,
      ...(endDate === '' ? {} : { end_date: endDate }),
      ...(layer.trim() === '' ? {} : { layer: Number(layer) }),
      ...(weekdays.length || from || to
        ? {
            restriction: {
              ...(weekdays.length ? { weekdays } : {}),
              ...(from ? { from } : {}),
              ...(to ? { to } : {}),
            },
          }
        : {}),
    };
    void action
      .run(() =>
        existing
          ? client.schedules.replaceRotation(props.scheduleId, existing.id, input)
          : client.schedules.addRotation(props.scheduleId, input),
      )
      .then((done) => done && props.onDone());
  };

  return (
    <form
      class="rotation-form"
      aria-label={existing ? `Edit rotation ${existing.name}` : 'New rotation'}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label>
        Rotation name
        <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Participants, in order</legend>
        <ol class="participants">
          {participants.map((participant, index) => (
            <li key={participant.key}>
              {nameOf(participant.userId)}{' '}
              <Button
                type="button"
                class="quiet small"
                disabled={index === 0}
                aria-label={`Move ${nameOf(participant.userId)} up from place ${index + 1}`}
                onClick={() =>
                  setParticipants((current) => {
                    const at = current.indexOf(participant);
                    if (at <= 0) return current;
                    const next = [...current];
                    [next[at - 1], next[at]] = [next[at]!, next[at - 1]!];
                    return next;
                  })
                }
              >
                ↑
              </Button>
              <button
                type="button"
                class="quiet small"
                aria-label={`Remove ${nameOf(participant.userId)} from place ${index + 1}`}
                onClick={() => setParticipants((current) => current.filter((other) => other !== participant))}
              >
                ×
              </button>
            </li>
          ))}
        </ol>
        {participants.length === 0 && <p class="muted">No one yet: add people in their order.</p>}
        <div class="inline-form">
          <label class="inline">
            Person to add
            <select value={candidate} onChange={(event) => setCandidate(event.currentTarget.value)}>
              <option value="">Choose…</option>
              {props.people.map((person) => (
                <option key={person.id} value={String(person.id)}>
                  {person.username}
                </option>
              ))}
            </select>
          </label>
          <Button
            type="button"
            disabled={candidate === ''}
            onClick={() => {
              setParticipants((current) => [...current, place(Number(candidate))]);
              setCandidate('');
            }}
          >
            Add participant
          </Button>
        </div>
      </fieldset>
      <div class="field-row">
        <label>
          Shift length
          <input
            type="number"
            min="1"
            required
            value={length}
            onInput={(event) => setLength(event.currentTarget.value)}
          />
        </label>
        <label>
          Shift unit
          <select value={unit} onChange={(event) => setUnit(event.currentTarget.value as ShiftUnit)}>
            <option value="hours">hours</option>
            <option value="days">days</option>
            <option value="weeks">weeks</option>
          </select>
        </label>
        <label>
          Start date
          <input
            type="date"
            required
            value={startDate}
            onInput={(event) => setStartDate(event.currentTarget.value)}
          />
        </label>
        <label>
          Handoff time
          <input
            type="time"
            required
            value={handoff}
            onInput={(event) => setHandoff(event.currentTarget.value)}
          />
        </label>
        <label>
          End date (empty: no end)
          <input type="date" value={endDate} onInput={(event) => setEndDate(event.currentTarget.value)} />
        </label>
        <label>
          Layer (higher wins; empty: on top)
          <input type="number" value={layer} onInput={(event) => setLayer(event.currentTarget.value)} />
        </label>
      </div>
      <fieldset>
        <legend>Only on these weekdays (none ticked: every day)</legend>
        <div class="weekdays">
          {ISO_WEEKDAYS.map((day, index) => (
            <label class="inline" key={day}>
              <input
                type="checkbox"
                checked={weekdays.includes(index + 1)}
                onChange={() =>
                  setWeekdays((current) =>
                    current.includes(index + 1)
                      ? current.filter((other) => other !== index + 1)
                      : [...current, index + 1].sort(),
                  )
                }
              />
              {day}
            </label>
          ))}
        </div>
        <div class="field-row">
          <label>
            Only from (local time)
            <input type="time" value={from} onInput={(event) => setFrom(event.currentTarget.value)} />
          </label>
          <label>
            Until (earlier than "from" wraps past midnight)
            <input type="time" value={to} onInput={(event) => setTo(event.currentTarget.value)} />
          </label>
        </div>
      </fieldset>
      <ErrorNote error={action.error} />
      <div class="actions">
        <Button type="submit" class="primary" busy={action.busy}>
          {existing ? 'Save rotation' : 'Add rotation'}
        </Button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** One form, one submit: a person covers from → to (defaults: now → +1 day), times in the schedule's zone. */
function OverrideForm(props: { schedule: Schedule; people: Person[]; onAdded: () => void }) {
  const zone = props.schedule.time_zone;
  const { me } = useSession();
  const [person, setPerson] = useState(String(me.user.id));
  // Until typed in, "from" is now and "to" a day later, read when the form is
  // shown and again when it is sent: a page left open must not backdate the
  // cover to when it was opened, which rewrote who was on call meanwhile and
  // came too late for the handoff notices (they tell the last 15 minutes).
  const [typedFrom, setFrom] = useState<string | undefined>(undefined);
  const [typedTo, setTo] = useState<string | undefined>(undefined);
  const fromNow = (now: number) => ({
    from: typedFrom ?? wallTimeOf(now, zone),
    to: typedTo ?? wallTimeOf(now + DAY_MS, zone),
  });
  const { from, to } = fromNow(Date.now());
  const action = useAction();
  return (
    <form
      class="override-form"
      aria-label="Add override"
      onSubmit={(event) => {
        event.preventDefault();
        const sent = fromNow(Date.now());
        void action
          .run(() =>
            client.schedules.addOverride(props.schedule.id, {
              user_id: Number(person),
              starts_at: wallTimeToIso(sent.from, zone),
              ends_at: wallTimeToIso(sent.to, zone),
            }),
          )
          .then((done) => done && props.onAdded());
      }}
    >
      <div class="field-row">
        <label>
          Person covering
          <select value={person} onChange={(event) => setPerson(event.currentTarget.value)}>
            {props.people.map((candidate) => (
              <option key={candidate.id} value={String(candidate.id)}>
                {candidate.username}
              </option>
            ))}
          </select>
        </label>
        <label>
          From ({zone})
          <input
            type="datetime-local"
            required
            value={from}
            onInput={(event) => setFrom(event.currentTarget.value)}
          />
        </label>
        <label>
          To ({zone})
          <input
            type="datetime-local"
            required
            value={to}
            onInput={(event) => setTo(event.currentTarget.value)}
          />
        </label>
      </div>
      <ErrorNote error={action.error} />
      <Button type="submit" class="primary" busy={action.busy}>
        Add override
      </Button>
    </form>
  );
}

/** One schedule: the effective timeline, its rotations and overrides, its calendar feed. */
export function ScheduleDetailPage(props: { id: number }) {
  const { me } = useSession();
  const admin = me.user.role === 'admin';
  const schedule = useData(() => client.schedules.get(props.id), [props.id]);
  // The window starts when it is read, not when the page opened: a page left
  // open (a wall display) is refreshed every minute by the live updates, and
  // its first row stays whoever is on call now.
  const timeline = useData(async () => {
    const from = Date.now();
    const to = from + TIMELINE_DAYS * DAY_MS;
    const iso = (at: number) => new Date(at).toISOString();
    return {
      from,
      to,
      segments: await client.schedules.timeline(props.id, { from: iso(from), to: iso(to) }),
    };
  }, [props.id]);
  const overrides = useData(() => {
    const from = Date.now();
    return client.schedules.overrides(props.id, {
      from: new Date(from).toISOString(),
      to: new Date(from + OVERRIDE_DAYS * DAY_MS).toISOString(),
    });
  }, [props.id]);
  const people = useData(() => (admin ? api.people() : Promise.resolve([] as Person[])), [admin]);
  const [editing, setEditing] = useState<number | 'new' | undefined>(undefined);
  const action = useAction();
  const reloadAll = () => {
    schedule.reload();
    timeline.reload();
    overrides.reload();
  };
  // What a Delete removed, said in a polite status: the focus moves on to the next item, whose
  // button names that item, so without it a screen reader user is not told the other one went.
  const [removed, setRemoved] = useState('');
  const remove = (what: string, work: () => Promise<unknown>) => {
    setRemoved('');
    void action.run(work).then((done) => {
      if (done) setRemoved(what);
      reloadAll();
    });
  };
  useLive((change) => change.topic === 'schedule', reloadAll);

  const data = schedule.data;
  if (!data)
    return (
      <Page title="Schedule">
        <ErrorNote error={schedule.error} />
        {!schedule.error && <p class="muted">Loading…</p>}
        <p>
          <Link href="/schedules">All schedules</Link>
        </p>
      </Page>
    );
  const zone = data.time_zone;
  const today = formatTime(new Date().toISOString(), zone).slice(0, 10);
  const onCallPeople = people.data ?? [];
  const rotations = data.rotations ?? [];

  return (
    <Page title={`Schedule: ${data.name}`}>
      <p>
        <Link href="/schedules">All schedules</Link> · Times are in <strong>{zone}</strong>
        {data.is_default && ' · the default schedule'}.
      </p>
      <NowAndNext schedule={data} />

      <h2>Who is on call, the next {TIMELINE_DAYS} days</h2>
      <ErrorNote error={timeline.error} />
      {timeline.data && <Timeline {...timeline.data} zone={zone} />}

      <h2>Overrides</h2>
      <ul class="plain overrides">
        {(overrides.data ?? []).map((override) => (
          <li key={override.id}>
            <strong>{override.username}</strong>{' '}
            <span class="muted">
              {override.date
                ? `all day ${override.date}`
                : `${when(override.starts_at, zone)} → ${when(override.ends_at, zone)}`}
            </span>{' '}
            {admin && (
              <button
                type="button"
                class="quiet small"
                aria-label={`Delete the override of ${override.username} from ${when(override.starts_at ?? override.date, zone)}`}
                onClick={() =>
                  remove(`The override of ${override.username} is deleted.`, () =>
                    client.schedules.deleteOverride(data.id, override.id),
                  )
                }
              >
                Delete
              </button>
            )}
          </li>
        ))}
        {overrides.data?.length === 0 && <li class="muted">No overrides in the coming year.</li>}
      </ul>
      <ErrorNote error={overrides.error} />
      {admin && (
        <>
          <h3>Add override</h3>
          <OverrideForm schedule={data} people={onCallPeople} onAdded={reloadAll} />
        </>
      )}

      <h2>Rotations</h2>
      <p class="muted">Where rotations overlap, the higher layer wins where it has someone.</p>
      <ul class="cards rotations">
        {rotations.map((rotation) => (
          <li class="card" key={rotation.id}>
            {editing === rotation.id ? (
              <RotationForm
                scheduleId={data.id}
                people={onCallPeople}
                rotation={rotation}
                today={today}
                onDone={() => {
                  setEditing(undefined);
                  reloadAll();
                }}
              />
            ) : (
              <>
                <h3 class="rotation-name">
                  {rotation.name} <span class="badge">layer {rotation.layer}</span>
                </h3>
                <p>
                  {/* By place: a person may be in the order twice (A, B, A, C). */}
                  {rotation.participants.map((participant, index) => (
                    <span key={index}>
                      {index > 0 && ' → '}
                      {participant.username}
                      {participant.deleted && ' (deleted)'}
                    </span>
                  ))}
                </p>
                <p class="muted">
                  Shifts of {plural(rotation.shift_length, rotation.shift_unit)}, handoff at{' '}
                  {rotation.handoff_time}, starting {rotation.start_date}
                  {rotation.end_date !== undefined && `, ending ${rotation.end_date}`}; restrictions:{' '}
                  {describeRestriction(rotation)}
                </p>
                {admin && (
                  <div class="row-actions">
                    <button type="button" class="small" onClick={() => setEditing(rotation.id)}>
                      Edit {rotation.name}
                    </button>
                    <button
                      type="button"
                      class="small danger"
                      onClick={() => {
                        if (confirm(`Delete the rotation ${rotation.name}?`))
                          remove(`The rotation ${rotation.name} is deleted.`, () =>
                            client.schedules.deleteRotation(data.id, rotation.id),
                          );
                      }}
                    >
                      Delete {rotation.name}
                    </button>
                  </div>
                )}
              </>
            )}
          </li>
        ))}
        {rotations.length === 0 && <li class="empty">No rotations.</li>}
      </ul>
      <ErrorNote error={action.error} />
      <p role="status" class="visually-hidden" data-testid="removed">
        {removed}
      </p>
      {admin &&
        (editing === 'new' ? (
          <>
            <h3>New rotation</h3>
            <RotationForm
              scheduleId={data.id}
              people={onCallPeople}
              today={today}
              onDone={() => {
                setEditing(undefined);
                reloadAll();
              }}
            />
          </>
        ) : (
          <button type="button" onClick={() => setEditing('new')}>
            New rotation
          </button>
        ))}

      {admin && (
        <>
          <h2>Calendar feed</h2>
          <CalendarFeedPanel
            what={`the ${data.name} schedule`}
            since={data.feed_created_at}
            zone={zone}
            rotate={() => client.schedules.rotateFeed(data.id)}
            remove={() => client.schedules.deleteFeed(data.id)}
          />
        </>
      )}
    </Page>
  );
}
