import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Alert, Incident, IncidentEvent } from '@terdut/client';
import { alertIdentities } from '../alert-identity.ts';
import { api, client } from '../api.ts';
import { Link } from '../router.tsx';
import { useLive } from '../live.ts';
import { readSession, removeSession, removeSessionPrefixed, writeSession } from '../session-store.ts';
import {
  Button,
  ErrorNote,
  formatDuration,
  formatTime,
  isSnoozed,
  Page,
  SeverityBadge,
  SNOOZE_CHOICES,
  StatusBadge,
  useAction,
  useData,
  useSession,
} from '../ui.tsx';
import { AssignControl } from './queue.tsx';

/** How each known timeline event reads; unknown types are shown by their name. */
const EVENT_WORDS: Record<string, string> = {
  triggered: 'triggered',
  alert_added: 'alert added',
  alert_resolved: 'alert resolved',
  acknowledged: 'acknowledged',
  unacknowledged: 'took back the acknowledgement',
  assigned: 'assigned',
  snoozed: 'snoozed',
  unsnoozed: 'un-snoozed',
  resolved: 'resolved',
  note: 'note',
};

/** One incident: its alerts, its timeline, and every action on it. */
export function IncidentPage(props: { id: number }) {
  const { info, me } = useSession();
  // The incident and its timeline load together, so the page never shows a state its timeline
  // does not explain yet (acknowledged above, no acknowledgement below).
  const incident = useData(async () => {
    const [found, events] = await Promise.all([
      client.incidents.get(props.id),
      client.incidents.timeline(props.id),
    ]);
    return { ...found, timeline: events };
  }, [props.id]);
  const people = useData(() => api.people(), []);
  const refresh = incident.reload;
  useLive((change) => change.topic !== 'schedule' && (change.incident_id ?? props.id) === props.id, refresh);
  const action = useAction();
  // The pressed button keeps the focus while the server answers (see Button), but it may make way
  // for another once the incident is fetched again (Snooze for Un-snooze), which drops the focus to
  // the page's body: a keyboard or screen reader user would start again from the top after each
  // action. The focus goes back to the button if it is still there, or else to the Actions group,
  // without scrolling: a refusal shown above must stay in view.
  const focusAfter = useRef<{
    pressed: Element | null;
    group: HTMLElement | null;
    answered: boolean;
    done: boolean;
  }>(undefined);
  // That an action was taken, said once the incident is fetched again: a screen reader hears it,
  // where the changed buttons alone say nothing to someone who does not see them.
  const [announced, setAnnounced] = useState('');
  const act = async (work: () => Promise<unknown>) => {
    const pressed = document.activeElement;
    const group = pressed?.closest<HTMLElement>('[role="group"]') ?? null;
    const focus = { pressed, group, answered: false, done: false };
    focusAfter.current = focus;
    setAnnounced('');
    const done = await action.run(work);
    focus.answered = true;
    focus.done = Boolean(done);
    refresh();
    return done;
  };
  useEffect(() => {
    const after = focusAfter.current;
    if (after === undefined || !after.answered) return;
    focusAfter.current = undefined;
    // A plain word: the page's own texts ("assigned to mia") stay the only ones that say what changed.
    if (after.done) setAnnounced('Done.');
    if (document.activeElement !== document.body) return;
    if (after.pressed instanceof HTMLElement && after.pressed.isConnected)
      after.pressed.focus({ preventScroll: true });
    else if (after.group?.isConnected) after.group.focus({ preventScroll: true });
  }, [incident.data]);
  const alerts = incident.data?.alerts;
  // Once per load, not per event: an incident can hold a thousand alerts and as many events.
  const identities = useMemo(() => alertIdentities(alerts ?? []), [alerts]);
  const alertsById = useMemo(() => new Map((alerts ?? []).map((alert) => [alert.id, alert])), [alerts]);

  if (incident.data === undefined)
    return (
      <Page title={`Incident #${props.id}`}>
        {incident.error ? <ErrorNote error={incident.error} /> : <p>Loading…</p>}
        <Link href="/">Back to the queue</Link>
      </Page>
    );
  const current = incident.data;
  return (
    <Page title={`#${current.id} ${current.title}`}>
      <div class="facts">
        <SeverityBadge severity={current.severity} />
        <StatusBadge
          status={current.status}
          snoozed={isSnoozed(current)}
          archived={current.archived_at !== undefined}
        />
        <span>triggered {formatTime(current.triggered_at, info.time_zone)}</span>
        {current.acknowledged_by && (
          <span>
            acknowledged by <strong>{current.acknowledged_by}</strong>
          </span>
        )}
        <span>
          {current.assigned_to ? (
            <>
              assigned to <strong>{current.assigned_to}</strong>
            </>
          ) : (
            'unassigned'
          )}
        </span>
        {isSnoozed(current) && <span>snoozed until {formatTime(current.snoozed_until, info.time_zone)}</span>}
        {current.resolved_at && (
          <span>
            resolved {formatTime(current.resolved_at, info.time_zone)}
            {current.resolution_source === 'alerts' ? ' (its alerts resolved)' : ''}
          </span>
        )}
      </div>
      {/* The server's zone, not the browser's: say so, or 07:18 reads as local time to someone elsewhere. */}
      <p class="muted">Times are in {info.time_zone}.</p>
      <Actions incident={current} people={people.data ?? []} busy={action.busy} act={act} meId={me.user.id} />
      <p role="status" class="visually-hidden" data-testid="action-done">
        {announced}
      </p>
      <ErrorNote error={action.error} />

      <h2>Alerts</h2>
      {(current.alerts ?? []).length === 0 && <p class="empty">No alerts.</p>}
      <ul class="alerts">
        {(current.alerts ?? []).map((alert) => (
          <AlertCard key={alert.id} alert={alert} zone={info.time_zone} />
        ))}
      </ul>

      <h2>Timeline</h2>
      <ErrorNote error={incident.error} />
      <ol class="timeline">
        {current.timeline.map((event) => (
          <TimelineEntry
            key={event.id}
            event={event}
            alert={event.alert_id === undefined ? undefined : alertsById.get(event.alert_id)}
            identity={event.alert_id === undefined ? undefined : identities.get(event.alert_id)}
            zone={info.time_zone}
            mine={event.user_id === me.user.id}
            onDelete={() => act(() => client.incidents.deleteNote(current.id, event.id))}
          />
        ))}
      </ol>
      <NoteForm
        incidentId={current.id}
        onAdd={(text) => act(() => client.incidents.addNote(current.id, text))}
        busy={action.busy}
      />
    </Page>
  );
}

function Actions(props: {
  incident: Incident;
  people: { id: number; username: string }[];
  busy: boolean;
  meId: number;
  act: (work: () => Promise<unknown>) => Promise<boolean>;
}) {
  const { incident, busy, act } = props;
  const [duration, setDuration] = useState('1h');
  const [confirming, setConfirming] = useState(false);
  // The confirmation takes the Resolve button's place, and the focus with it: on Cancel (least
  // harmful) while it asks, back on Resolve when it is gone.
  const resolveButton = useRef<HTMLButtonElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    if (confirming) cancelButton.current?.focus();
    else if (asked.current) resolveButton.current?.focus();
    asked.current ||= confirming;
  }, [confirming]);
  const id = incident.id;
  if (incident.status === 'resolved')
    return (
      <div class="actions" role="group" aria-label="Actions" tabIndex={-1}>
        {incident.archived_at === undefined ? (
          <Button busy={busy} onClick={() => void act(() => client.incidents.archive(id))}>
            Archive
          </Button>
        ) : (
          <Button busy={busy} onClick={() => void act(() => client.incidents.unarchive(id))}>
            Un-archive
          </Button>
        )}
      </div>
    );
  return (
    <div class="actions" role="group" aria-label="Actions" tabIndex={-1}>
      {incident.status === 'triggered' && (
        <Button
          class="primary big"
          busy={busy}
          onClick={() => void act(() => client.incidents.acknowledge(id))}
        >
          Acknowledge
        </Button>
      )}
      <AssignControl
        incident={incident}
        people={props.people}
        busy={busy}
        onAssign={(userId) => act(() => client.incidents.assign(id, userId))}
      />
      {isSnoozed(incident) ? (
        <Button busy={busy} onClick={() => void act(() => client.incidents.unsnooze(id))}>
          Un-snooze
        </Button>
      ) : (
        <span class="assign">
          <label class="inline">
            <span class="visually-hidden">Snooze for</span>
            <input
              list="snooze-choices"
              size={5}
              aria-label="Snooze for (30m, 2h, 1h30m)"
              value={duration}
              onInput={(event) => setDuration(event.currentTarget.value)}
            />
          </label>
          <datalist id="snooze-choices">
            {SNOOZE_CHOICES.map((choice) => (
              <option key={choice} value={choice} />
            ))}
          </datalist>
          <Button busy={busy} onClick={() => void act(() => client.incidents.snooze(id, duration.trim()))}>
            Snooze
          </Button>
        </span>
      )}
      {confirming ? (
        <span
          class="confirm"
          role="group"
          aria-label="Confirm resolving"
          // Escape backs out, as it does of any question a page asks.
          onKeyDown={(event) => {
            if (event.key === 'Escape') setConfirming(false);
          }}
        >
          <span>Resolving is final: the incident cannot be reopened.</span>
          <Button
            class="danger"
            busy={busy}
            onClick={() => void act(() => client.incidents.resolve(id)).then(() => setConfirming(false))}
          >
            Yes, resolve
          </Button>
          <button ref={cancelButton} onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <Button ref={resolveButton} class="danger" busy={busy} onClick={() => setConfirming(true)}>
          Resolve
        </Button>
      )}
      {/* Last, never where Acknowledge was: a double tap on Acknowledge would land on it and page again. */}
      {incident.status === 'acknowledged' && (
        <Button busy={busy} onClick={() => void act(() => client.incidents.unacknowledge(id))}>
          Take back acknowledgement
        </Button>
      )}
    </div>
  );
}

function AlertCard(props: { alert: Alert; zone: string }) {
  const { alert, zone } = props;
  const runbook = alert.annotations.runbook_url;
  return (
    <li class="alert-card">
      <div class="row-main">
        <span class={`badge alert-${alert.status}`}>{alert.status}</span>
        <strong>{alert.name}</strong>
        {/* "since" says it still fires: a resolved alert started. */}
        <span class="muted">
          {alert.status === 'resolved' ? 'started' : 'since'} {formatTime(alert.starts_at, zone)}
        </span>
        {alert.status === 'resolved' && alert.ends_at !== undefined && (
          <AlertEnd startsAt={alert.starts_at} endsAt={alert.ends_at} zone={zone} />
        )}
      </div>
      {alert.annotations.summary && <p>{alert.annotations.summary}</p>}
      <dl class="labels">
        {Object.entries(alert.labels).map(([name, value]) => (
          <div key={name} class="label">
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <details>
        <summary>Annotations</summary>
        <dl>
          {Object.entries(alert.annotations).map(([name, value]) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      </details>
      <p class="links">
        {safeUrl(alert.generator_url) && (
          <a href={alert.generator_url} target="_blank" rel="noopener noreferrer">
            Source graph ({alert.name})
          </a>
        )}
        {runbook && safeUrl(runbook) && (
          <a href={runbook} target="_blank" rel="noopener noreferrer">
            Runbook ({alert.name})
          </a>
        )}
      </p>
    </li>
  );
}

/**
 * When a resolved alert ended and how long it fired: `resolved 14:32 (fired 12m)`, the date
 * written again only when it is not the start's (in `zone`).
 */
function AlertEnd(props: { startsAt: string; endsAt: string; zone: string }) {
  const start = formatTime(props.startsAt, props.zone);
  const end = formatTime(props.endsAt, props.zone);
  const [startDay] = start.split(' ');
  const [endDay, endClock] = end.split(' ');
  const firedSeconds = (new Date(props.endsAt).getTime() - new Date(props.startsAt).getTime()) / 1000;
  return (
    <span class="muted">
      resolved <time dateTime={props.endsAt}>{endDay === startDay ? endClock : end}</time> (fired{' '}
      {formatDuration(firedSeconds)})
    </span>
  );
}

/** Only http(s) links from alerts: a `javascript:` URL in a label must not run when clicked. */
function safeUrl(url: string | undefined): boolean {
  return url !== undefined && /^https?:\/\//i.test(url);
}

function TimelineEntry(props: {
  event: IncidentEvent;
  /** The alert the event is about, when the incident lists it. */
  alert: Alert | undefined;
  /** What tells that alert apart from the incident's others (`instance=db-3:9100`), when anything does. */
  identity: string | undefined;
  zone: string;
  mine: boolean;
  onDelete(): Promise<unknown>;
}) {
  const { event } = props;
  const words = EVENT_WORDS[event.type] ?? event.type.replaceAll('_', ' ');
  return (
    <li class={`event event-${EVENT_WORDS[event.type] ? event.type : 'other'}`}>
      <time dateTime={event.created_at}>{formatTime(event.created_at, props.zone)}</time>{' '}
      <strong>{event.username ?? 'terdut'}</strong> {event.type === 'note' ? 'wrote' : words}
      {event.type === 'note' ? (
        <blockquote>{event.detail}</blockquote>
      ) : (
        event.detail && (
          <span class="muted">
            {' '}
            — <AlertDetail detail={event.detail} alert={props.alert} identity={props.identity} />
          </span>
        )
      )}
      {event.type === 'note' && props.mine && (
        <button class="quiet small" onClick={() => void props.onDelete()}>
          Delete note
        </button>
      )}
    </li>
  );
}

/**
 * An event's remark with its alert told apart: `HighCPU (instance=db-3:9100)`, right after the
 * alert's name where the remark starts with it (`HighCPU (instance=db-3:9100) was not refreshed
 * for 5m; presumed resolved`), else after the remark. Only the remark for an event about no alert
 * or one the incident does not list.
 */
function AlertDetail(props: { detail: string; alert: Alert | undefined; identity: string | undefined }) {
  const { detail, alert, identity } = props;
  if (alert === undefined || identity === undefined) return <>{detail}</>;
  // The server names an alert by its name, or its fingerprint when it has none.
  const named = [alert.name, alert.fingerprint].find((name) => name !== '' && detail.startsWith(name));
  if (named === undefined) return <>{`${detail} (${identity})`}</>;
  return <>{`${named} (${identity})${detail.slice(named.length)}`}</>;
}

/**
 * Notes being written, by incident, for as long as the tab lives (session
 * storage): when the session ends the page gives way to the sign-in form, or
 * leaves for the identity provider and comes back (SSO), and the note must
 * be there again once the person is back. Signing out clears them.
 */
const noteDrafts = {
  get: (incidentId: number) => readSession(draftKey(incidentId)),
  set: (incidentId: number, text: string) => writeSession(draftKey(incidentId), text),
  delete: (incidentId: number) => removeSession(draftKey(incidentId)),
};
const DRAFT_PREFIX = 'terdut:note-draft:';
const draftKey = (incidentId: number) => `${DRAFT_PREFIX}${incidentId}`;
/** Forgets every note being written (signing out: the next person at this browser must not see them). */
export function forgetNoteDrafts(): void {
  removeSessionPrefixed(DRAFT_PREFIX);
}

function NoteForm(props: { incidentId: number; busy: boolean; onAdd(text: string): Promise<boolean> }) {
  const [text, setDraft] = useState(() => noteDrafts.get(props.incidentId) ?? '');
  const setText = (value: string) => {
    setDraft(value);
    if (value === '') noteDrafts.delete(props.incidentId);
    else noteDrafts.set(props.incidentId, value);
  };
  return (
    <form
      class="note-form"
      onSubmit={(event) => {
        event.preventDefault();
        const sent = text;
        // Once saved, only the words sent leave the box: what was typed while the server answered
        // (a slow phone network) stays, where emptying the box threw it away. The drafts hold what
        // the box holds now.
        void props
          .onAdd(sent)
          .then((done) => done && setText(textAfterSending(noteDrafts.get(props.incidentId) ?? '', sent)));
      }}
    >
      <label>
        Note
        <textarea rows={3} value={text} onInput={(event) => setText(event.currentTarget.value)} />
      </label>
      <Button type="submit" busy={props.busy} disabled={text.trim() === ''}>
        Add note
      </Button>
    </form>
  );
}

/** The box's text once the note `sent` is saved: what was typed after it, or all of it if it was edited. */
function textAfterSending(now: string, sent: string): string {
  if (now === sent) return '';
  return now.startsWith(sent) ? now.slice(sent.length).trimStart() : now;
}
