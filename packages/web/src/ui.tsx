/** Building blocks the pages share: loading data, showing the server's errors, times in the server's zone. */
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { ButtonHTMLAttributes, ComponentChildren, TargetedMouseEvent } from 'preact';
import type { Incident } from '@terdut/client';
import { errorText, type Me, type ServerInfo } from './api.ts';

export interface Session {
  info: ServerInfo;
  me: Me;
  refreshMe: () => Promise<void>;
  signOut: () => Promise<void>;
}
export const SessionContext = createContext<Session | undefined>(undefined);
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (session === undefined) throw new Error('useSession outside a signed-in page');
  return session;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` now and whenever `deps` change; `reload()` fetches again and
 * keeps the old data meanwhile. When `deps` change the old data goes at once:
 * it is another list (the open incidents under the heading Resolved, with
 * the keys acting on them), not an older copy of this one.
 */
export function useData<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const loader = useRef(load);
  loader.current = load;
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    loader.current().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (mine !== generation.current) return;
        setError(errorText(failure));
        setLoading(false);
      },
    );
  }, []);
  const firstLoad = useRef(true);
  useEffect(() => {
    if (!firstLoad.current) {
      setData(undefined);
      setError(undefined);
    }
    firstLoad.current = false;
    reload();
  }, deps);
  return { data, error, loading, reload };
}

/** Said while a page's data has not arrived yet, so an empty page is never read as "nothing there". */
export function LoadingNote(props: { loaded: Loaded<unknown> }) {
  if (props.loaded.data !== undefined || props.loaded.error !== undefined) return null;
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/**
 * Runs a server action, remembering its error for display where the action is.
 * One at a time: `run` while the last one still runs does nothing and answers
 * `false`, so a key pressed twice (the queue's `a`) or a second press before
 * the page drew the button busy never sends the request twice.
 */
export function useAction(): {
  busy: boolean;
  error: string | undefined;
  run: (action: () => Promise<unknown>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  // A ref, not `busy`: the state is the last render's, and two presses can come before the next.
  const running = useRef(false);
  return {
    busy,
    error,
    clear: () => setError(undefined),
    async run(action) {
      if (running.current) return false;
      running.current = true;
      setBusy(true);
      setError(undefined);
      try {
        await action();
        return true;
      } catch (failure) {
        setError(errorText(failure));
        return false;
      } finally {
        running.current = false;
        setBusy(false);
      }
    },
  };
}

export type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'disabled' | 'onClick'> & {
  /** Its request runs: it does nothing, and says so (`aria-busy`, `aria-disabled`). */
  busy?: boolean;
  /** It cannot act now (nothing to send yet, the first row cannot move up). */
  disabled?: boolean;
  onClick?: (event: TargetedMouseEvent<HTMLButtonElement>) => void;
};

/**
 * Every button of the app that can be unable to act: it keeps the keyboard
 * focus while it is. The `disabled` attribute takes the focus away (a
 * disabled element cannot hold it; it falls to the page's body), so a
 * keyboard or screen reader user who pressed Save started again from the top
 * of the page. `aria-disabled` says "unavailable" the same way, and the press
 * is cancelled here instead: a click, Enter or Space on it, or Enter in a
 * field of its form (the browser submits a form by clicking its first submit
 * button, and a cancelled click submits nothing). A busy one is
 * `aria-busy` too, while its request runs.
 *
 *   <Button type="submit" busy={action.busy}>Save</Button>
 */
export function Button({ busy = false, disabled = false, onClick, ...rest }: ButtonProps) {
  const inert = busy || disabled;
  return (
    <button
      {...rest}
      aria-disabled={inert ? 'true' : undefined}
      aria-busy={busy ? 'true' : undefined}
      onClick={(event) => {
        if (inert) {
          event.preventDefault();
          return;
        }
        onClick?.(event);
      }}
    />
  );
}

/**
 * The server's words for a refusal. Brought into view when it appears: on a
 * phone the button pressed is often far below the note, and a refusal
 * drawn off-screen looks like nothing happened.
 */
export function ErrorNote(props: { error: string | undefined }) {
  const note = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (props.error !== undefined) note.current?.scrollIntoView?.({ block: 'nearest' });
  }, [props.error]);
  if (props.error === undefined) return null;
  return (
    <p class="error" role="alert" ref={note}>
      {props.error}
    </p>
  );
}

export function Page(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · terdut`;
  }, [props.title]);
  return (
    <section class="page">
      <header class="page-head">
        <h1>{props.title}</h1>
        {props.actions}
      </header>
      {props.children}
    </section>
  );
}

/** `2026-12-03 14:05` in `zone`. */
export function formatTime(iso: string | undefined, zone: string): string {
  if (iso === undefined) return '';
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((part) => part.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

/** `45s`, `12m`, `3h 5m`, `2d 4h`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function age(iso: string, now = Date.now()): string {
  return formatDuration((now - new Date(iso).getTime()) / 1000);
}

/** Today's calendar date (`YYYY-MM-DD`) in `zone`. */
export function todayIn(zone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date());
}

export const SEVERITY_RANK: Record<string, number> = { critical: 0, error: 1, warning: 2, info: 3 };

export function SeverityBadge(props: { severity: string | undefined }) {
  const severity = props.severity ?? 'none';
  return <span class={`badge sev-${severity}`}>{severity}</span>;
}

/**
 * Whether a snooze holds the incident now. A resolved incident keeps the
 * `snoozed_until` it had (an alert resolving within a snooze resolves it),
 * but nothing is held any more: it is resolved, not snoozed.
 */
export function isSnoozed(incident: Incident): boolean {
  return (
    incident.status !== 'resolved' &&
    incident.snoozed_until !== undefined &&
    new Date(incident.snoozed_until).getTime() > Date.now()
  );
}

export function StatusBadge(props: { status: string; snoozed?: boolean; archived?: boolean }) {
  const label = props.archived ? 'archived' : props.snoozed ? 'snoozed' : props.status;
  return <span class={`badge status-${label}`}>{label}</span>;
}

/** Go-style durations as the server takes them: `30m`, `2h`, `1h30m`. */
export const SNOOZE_CHOICES = ['30m', '1h', '2h', '4h', '8h', '24h'];
