import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Incident, IncidentQuery } from '@terdut/client';
import { api, client } from '../api.ts';
import { Link, navigate, useLocation, useScrollRestored } from '../router.tsx';
import { useLive } from '../live.ts';
import { readSession, writeSession } from '../session-store.ts';
import { PagingWarning } from './paging.tsx';
import {
  age,
  Button,
  ErrorNote,
  isSnoozed,
  LoadingNote,
  Page,
  SEVERITY_RANK,
  SeverityBadge,
  StatusBadge,
  useAction,
  useData,
  useSession,
} from '../ui.tsx';

/** The queue's filters, in the terminal client's order. */
const FILTERS: { key: string; label: string; query: IncidentQuery }[] = [
  { key: 'open', label: 'Open', query: {} },
  { key: 'triggered', label: 'Triggered', query: { status: 'triggered' } },
  { key: 'acknowledged', label: 'Acknowledged', query: { status: 'acknowledged' } },
  { key: 'resolved', label: 'Resolved', query: { status: 'resolved' } },
  { key: 'snoozed', label: 'Snoozed', query: { snoozed: true } },
  { key: 'archived', label: 'Archived', query: { archived: true } },
];

type Sort = 'severity' | 'newest' | 'oldest';
const SORT_KEY = 'terdut:queue-sort';

function storedSort(): Sort | undefined {
  const stored = readSession(SORT_KEY);
  return stored === 'severity' || stored === 'newest' || stored === 'oldest' ? stored : undefined;
}

function sortIncidents(incidents: Incident[], sort: Sort): Incident[] {
  const byAge = (a: Incident, b: Incident) => b.triggered_at.localeCompare(a.triggered_at);
  const sorted = [...incidents];
  if (sort === 'newest') return sorted.sort(byAge);
  if (sort === 'oldest') return sorted.sort((a, b) => byAge(b, a));
  const rank = (incident: Incident) => SEVERITY_RANK[incident.severity ?? ''] ?? 9;
  return sorted.sort((a, b) => rank(a) - rank(b) || byAge(a, b));
}

/** Home: open incidents, filters, sort, acknowledge and assign from the list, keyboard-driven. */
export function QueuePage() {
  const { me } = useSession();
  const { query: params } = useLocation();
  const filterKey = params.get('filter') ?? 'open';
  const filter = FILTERS.find((candidate) => candidate.key === filterKey) ?? FILTERS[0]!;
  // Kept for the tab: back from an incident, the list is in the order it was read in.
  const [sort, setSortState] = useState<Sort>(() => storedSort() ?? 'severity');
  const setSort = (next: Sort) => {
    setSortState(next);
    writeSession(SORT_KEY, next);
  };
  const [text, setText] = useState('');
  // The incident picked, not its row: live updates re-sort the list, and a
  // row number would move the selection (and `a`) onto another incident.
  // Nothing picked yet: the first row.
  const [selectedId, setSelectedId] = useState<number | undefined>(undefined);
  const search = useRef<HTMLInputElement>(null);
  const action = useAction();

  const queue = useData(() => client.incidents.list({ ...filter.query, limit: 500 }), [filter.key]);
  const people = useData(() => api.people(), []);
  useLive((change) => change.topic === 'incidents' || change.topic === 'alerts', queue.reload);
  useScrollRestored(queue.data !== undefined);

  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    const matching = (queue.data ?? []).filter(
      (incident) =>
        needle === '' ||
        `#${incident.id} ${incident.title} ${incident.assigned_to ?? ''} ${incident.severity ?? ''}`
          .toLowerCase()
          .includes(needle),
    );
    return sortIncidents(matching, sort);
  }, [queue.data, sort, text]);
  // -1: the incident picked has left the list; keys act on nothing until j/k picks again.
  const selected =
    selectedId === undefined
      ? shown.length > 0
        ? 0
        : -1
      : shown.findIndex((incident) => incident.id === selectedId);
  const current = selected >= 0 ? shown[selected] : undefined;
  // The keys act on the picked incident, so the focus goes with it (and comes back from it: a row
  // tabbed into is picked, see onFocusIn). Otherwise `a` pressed on a row reached with Tab acknowledged
  // another one, the row highlighted before.
  const pick = (index: number) => {
    const id = shown[Math.min(Math.max(index, 0), shown.length - 1)]?.id;
    setSelectedId(id);
    if (id !== undefined) document.querySelector<HTMLElement>(`[data-incident="${id}"] a.title`)?.focus();
  };

  // The incident the last action was on: its refusal is shown in its row, beside the button pressed.
  // At the top of the page it scrolled a phone away from the row and did not say which incident it
  // was about.
  const [actedOn, setActedOn] = useState<number | undefined>(undefined);
  // The button pressed keeps the focus while the server answers, but Acknowledge makes way once the
  // list is read again, and the focus would fall to the page's body: it goes to the row's title then,
  // where the keys act on the same incident and Tab goes on from the row.
  const pressedInRow = useRef<{ id: number; pressed: Element; answered: boolean }>(undefined);
  const act = async (id: number, work: () => Promise<unknown>) => {
    setActedOn(id);
    const pressed = document.activeElement;
    const inRow = pressed?.closest(`[data-incident="${id}"]`) ? pressed : null;
    const mine = inRow === null ? undefined : { id, pressed: inRow, answered: false };
    pressedInRow.current = mine;
    const done = await action.run(work);
    if (mine !== undefined) mine.answered = true;
    if (done) queue.reload();
  };
  useEffect(() => {
    const after = pressedInRow.current;
    if (after === undefined || !after.answered) return;
    pressedInRow.current = undefined;
    if (after.pressed.isConnected || document.activeElement !== document.body) return;
    document
      .querySelector<HTMLElement>(`[data-incident="${after.id}"] a.title`)
      ?.focus({ preventScroll: true });
  }, [queue.data]);
  // A refusal about an incident no longer listed (resolved meanwhile) is shown at the top instead.
  const actedOnShown = shown.some((incident) => incident.id === actedOn);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)) {
        if (event.key === 'Escape') target.blur();
        return;
      }
      if (event.key === '/') {
        event.preventDefault();
        search.current?.focus();
      } else if (event.key === 'j') pick(selected < 0 ? 0 : selected + 1);
      else if (event.key === 'k') pick(selected < 0 ? 0 : selected - 1);
      else if (current === undefined) return;
      else if (event.key === 'Enter' && target.tagName !== 'BUTTON' && target.tagName !== 'A')
        navigate(`/incidents/${current.id}`);
      else if (event.key === 'a') void act(current.id, () => client.incidents.acknowledge(current.id));
      else if (event.key === 's') void act(current.id, () => client.incidents.assign(current.id, me.user.id));
      else if (event.key === 'z') void act(current.id, () => client.incidents.snooze(current.id, '1h'));
      else if (event.key === 'R' && confirm(`Resolve #${current.id} "${current.title}"? Resolving is final.`))
        void act(current.id, () => client.incidents.resolve(current.id));
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  // Brought into view when the person picks another incident (j/k), not when a live update moves
  // the picked one: in an alert storm that would pull the page back to it with every new incident
  // while the person reads further down.
  useEffect(() => {
    document.querySelector<HTMLElement>(`[data-row="${selected}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [selectedId]);

  return (
    <Page title="Incidents">
      <PagingWarning />
      <div class="toolbar">
        <nav aria-label="Incident filters" class="filters">
          {FILTERS.map((candidate) => (
            <Link
              key={candidate.key}
              href={candidate.key === 'open' ? '/' : `/?filter=${candidate.key}`}
              aria-current={candidate.key === filter.key ? 'true' : undefined}
            >
              {candidate.label}
            </Link>
          ))}
        </nav>
        <label class="inline">
          Sort
          <select value={sort} onChange={(event) => setSort(event.currentTarget.value as Sort)}>
            <option value="severity">by severity</option>
            <option value="newest">newest first</option>
            <option value="oldest">oldest first</option>
          </select>
        </label>
        <label class="inline grow">
          Filter
          <input
            ref={search}
            type="search"
            placeholder="title, assignee, #id (press /)"
            value={text}
            onInput={(event) => {
              setText(event.currentTarget.value);
              setSelectedId(undefined);
            }}
          />
        </label>
      </div>
      <p class="hint">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> open, <kbd>a</kbd> acknowledge, <kbd>s</kbd>{' '}
        assign to me, <kbd>z</kbd> snooze 1h, <kbd>R</kbd> resolve, <kbd>/</kbd> filter.
      </p>
      <ErrorNote error={queue.error ?? (actedOnShown ? undefined : action.error)} />
      <LoadingNote loaded={queue} />
      {queue.data !== undefined && shown.length === 0 && (
        <p class="empty">No {filter.label.toLowerCase()} incidents. All quiet.</p>
      )}
      <ol class="queue" aria-label={`${filter.label} incidents`}>
        {shown.map((incident, index) => (
          <li
            key={incident.id}
            data-row={index}
            data-incident={incident.id}
            class={index === selected ? 'row selected' : 'row'}
            onClick={() => setSelectedId(incident.id)}
            onFocusIn={() => setSelectedId(incident.id)}
          >
            <div class="row-main">
              <SeverityBadge severity={incident.severity} />
              <StatusBadge
                status={incident.status}
                snoozed={isSnoozed(incident)}
                archived={incident.archived_at !== undefined}
              />
              <Link href={`/incidents/${incident.id}`} class="title">
                #{incident.id} {incident.title}
              </Link>
            </div>
            <div class="row-meta">
              <span>{incident.assigned_to ? `assigned to ${incident.assigned_to}` : 'unassigned'}</span>
              <span>
                {incident.alert_count} alert{incident.alert_count === 1 ? '' : 's'}
              </span>
              <span title={incident.triggered_at}>{age(incident.triggered_at)} ago</span>
            </div>
            {incident.status !== 'resolved' && (
              <div class="row-actions">
                {incident.status === 'triggered' && (
                  <Button
                    class="primary"
                    busy={action.busy}
                    aria-describedby={`title-${incident.id}`}
                    onClick={() => void act(incident.id, () => client.incidents.acknowledge(incident.id))}
                  >
                    Acknowledge
                  </Button>
                )}
                <AssignControl
                  incident={incident}
                  people={people.data ?? []}
                  busy={action.busy}
                  onAssign={(userId) => act(incident.id, () => client.incidents.assign(incident.id, userId))}
                />
              </div>
            )}
            {incident.id === actedOn && <ErrorNote error={action.error} />}
            <span id={`title-${incident.id}`} hidden>
              #{incident.id} {incident.title}
            </span>
          </li>
        ))}
      </ol>
    </Page>
  );
}

/** A person picker and an Assign button. */
export function AssignControl(props: {
  incident: Incident;
  people: { id: number; username: string }[];
  busy: boolean;
  onAssign: (userId: number) => Promise<unknown>;
}) {
  const { me } = useSession();
  const assignee = String(props.incident.assigned_to_id ?? me.user.id);
  const [userId, setUserId] = useState(assignee);
  // Someone else (re)assigned it: the picker shows who has it now, not who it had when the page opened.
  useEffect(() => setUserId(assignee), [assignee]);
  return (
    <span class="assign">
      <select
        aria-label={`Person to assign #${props.incident.id} to`}
        value={userId}
        onChange={(event) => setUserId(event.currentTarget.value)}
      >
        {(props.people.length > 0 ? props.people : [me.user]).map((person) => (
          <option key={person.id} value={String(person.id)}>
            {person.username}
            {person.id === me.user.id ? ' (me)' : ''}
          </option>
        ))}
      </select>
      <Button busy={props.busy} onClick={() => void props.onAssign(Number(userId))}>
        Assign
      </Button>
    </span>
  );
}
