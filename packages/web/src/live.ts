/**
 * Live updates: the server's event stream (GET /api/events), and polling
 * when the stream is down. Pages register what to refetch; any change (and
 * every (re)connection, which may have missed some) triggers a refetch.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Change } from '@terdut/client';
import { api } from './api.ts';

export type LiveState = 'connecting' | 'live' | 'reconnecting';
export type { Change } from '@terdut/client';

const POLL_MS = 15_000;
/** Even while live, refetch now and then: background jobs (snooze expiry, stale alerts) do not announce. */
const SAFETY_REFRESH_MS = 60_000;
/** After the stream was refused (not merely cut), open a new one this much later. */
const REOPEN_MS = 5_000;

type Listener = (change: Change | 'resync') => void;
const listeners = new Set<Listener>();
const stateListeners = new Set<(state: LiveState) => void>();
let state: LiveState = 'connecting';
let source: EventSource | undefined;
let poller: number | undefined;
let safetyRefresh: number | undefined;
let reopen: number | undefined;

function setState(next: LiveState): void {
  state = next;
  stateListeners.forEach((listener) => listener(next));
}

function broadcast(change: Change | 'resync'): void {
  listeners.forEach((listener) => listener(change));
}

/** Opens the stream once signed in; EventSource reconnects by itself (the server says `retry: 2000`). */
export function startLive(): void {
  if (source !== undefined) return;
  open();
  poller ??= window.setInterval(() => {
    if (state !== 'live') broadcast('resync');
  }, POLL_MS);
  safetyRefresh ??= window.setInterval(() => broadcast('resync'), SAFETY_REFRESH_MS);
}

function open(): void {
  const stream = new EventSource('/api/events');
  source = stream;
  stream.addEventListener('ready', () => {
    setState('live');
    broadcast('resync');
  });
  stream.addEventListener('change', (event) => {
    try {
      broadcast(JSON.parse((event as MessageEvent<string>).data) as Change);
    } catch {
      broadcast('resync');
    }
  });
  stream.addEventListener('error', () => {
    setState('reconnecting');
    // EventSource retries by itself only after a network error. An answer other than 200 (a
    // proxy's 502 or 503 while the server restarts) closes it for good (the HTML standard's "fail
    // the connection"), and the page would poll, saying Reconnecting…, until reloaded.
    if (stream.readyState !== EventSource.CLOSED || reopen !== undefined) return;
    // A refusal may be the session's end (a 401: signed out elsewhere, a password reset, too long
    // unused). EventSource does not say which status it got, and a page that refetches nothing by
    // itself (Me, People, Statistics) would say Reconnecting… for ever: ask. A 401 here ends the
    // session for the whole app (api.ts); any other answer leaves it to the reopen below.
    void api.me().catch(() => {});
    reopen = window.setTimeout(() => {
      reopen = undefined;
      if (source === stream) open();
    }, REOPEN_MS);
  });
}

export function stopLive(): void {
  window.clearTimeout(reopen);
  reopen = undefined;
  source?.close();
  source = undefined;
  setState('connecting');
}

export function useLiveState(): LiveState {
  const [value, setValue] = useState(state);
  useEffect(() => {
    stateListeners.add(setValue);
    return () => stateListeners.delete(setValue);
  }, []);
  return value;
}

/** Calls `refetch` when a change matches `wants` (and after every reconnection), at most every 300 ms. */
export function useLive(wants: (change: Change) => boolean, refetch: () => void): void {
  const latest = useRef({ wants, refetch });
  latest.current = { wants, refetch };
  useEffect(() => {
    let timer: number | undefined;
    const listener: Listener = (change) => {
      if (change !== 'resync' && !latest.current.wants(change)) return;
      if (timer !== undefined) return;
      timer = window.setTimeout(() => {
        timer = undefined;
        latest.current.refetch();
      }, 150);
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      window.clearTimeout(timer);
    };
  }, []);
}
