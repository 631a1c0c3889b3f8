/** The terdut web app: who is signed in decides between setup, sign-in and the app itself. */
import { forgetNoteDrafts } from './pages/incident.tsx';
import { Component, render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import { api, errorText, isUnauthenticated, SESSION_ENDED_EVENT, type Me, type ServerInfo } from './api.ts';
import { Link, navigate, useLocation } from './router.tsx';
import { startLive, stopLive, useLiveState } from './live.ts';
import { keepFocusWhenRemoved } from './focus-after-removal.ts';
import { Button, ErrorNote, SessionContext, useAction, type Session } from './ui.tsx';
import { SetupPage, SignInPage } from './pages/sign-in.tsx';
import { QueuePage } from './pages/queue.tsx';
import { IncidentPage } from './pages/incident.tsx';
import { AlertsPage } from './pages/alerts.tsx';
import { SchedulePage } from './pages/schedule.tsx';
import { ScheduleDetailPage, SchedulesPage } from './pages/schedules.tsx';
import { StatsPage } from './pages/stats.tsx';
import { PeoplePage } from './pages/people.tsx';
import { MePage } from './pages/me.tsx';
import { EscalationPoliciesPage, HeartbeatsPage, MaintenancePage } from './pages/paging.tsx';

type Boot =
  | { state: 'loading' }
  | { state: 'failed'; error: string }
  | { state: 'setup'; info: ServerInfo }
  | { state: 'signed-out'; info: ServerInfo; ended?: boolean }
  | { state: 'signed-in'; info: ServerInfo; me: Me };

function App() {
  const [boot, setBoot] = useState<Boot>({ state: 'loading' });

  const start = async () => {
    try {
      const info = await api.serverInfo();
      if (!info.bootstrapped) return setBoot({ state: 'setup', info });
      try {
        const me = await api.me();
        setBoot({ state: 'signed-in', info, me });
      } catch (error) {
        if (!isUnauthenticated(error)) throw error;
        setBoot({ state: 'signed-out', info });
      }
    } catch (error) {
      setBoot({ state: 'failed', error: errorText(error) });
    }
  };
  useEffect(() => void start(), []);
  useEffect(() => {
    const ended = () =>
      setBoot((current) => {
        if (current.state !== 'signed-in') return current;
        stopLive();
        return { state: 'signed-out', info: current.info, ended: true };
      });
    window.addEventListener(SESSION_ENDED_EVENT, ended);
    return () => window.removeEventListener(SESSION_ENDED_EVENT, ended);
  }, []);

  if (boot.state === 'loading') return <p class="boot">Loading terdut…</p>;
  if (boot.state === 'failed')
    return (
      <main class="boot">
        <h1>terdut cannot be reached</h1>
        <p role="alert">{boot.error}</p>
        <button onClick={() => void start()}>Try again</button>
      </main>
    );
  if (boot.state === 'setup') return <SetupPage onReady={() => void start()} />;
  if (boot.state === 'signed-out')
    return (
      <SignInPage
        info={boot.info}
        onSignedIn={(me) => setBoot({ state: 'signed-in', info: boot.info, me })}
        {...(boot.ended
          ? {
              notice:
                'Your session ended (signed out elsewhere, or unused for too long). Sign in again to go on ' +
                'where you were; a note you were writing is kept.',
            }
          : {})}
      />
    );

  const session: Session = {
    info: boot.info,
    me: boot.me,
    async refreshMe() {
      setBoot({ ...boot, me: await api.me() });
    },
    async signOut() {
      try {
        await api.signOut();
      } catch (error) {
        // Only a server that no longer knows the session has signed it out. Any other failure (no
        // answer, a proxy's 502) leaves the session working on the server: showing the sign-in form
        // then would tell someone leaving a shared computer they are signed out, and a reload signs
        // them back in.
        if (!isUnauthenticated(error)) throw error;
      }
      forgetNoteDrafts();
      stopLive();
      setBoot({ state: 'signed-out', info: boot.info });
      navigate('/', { replace: true });
    },
  };
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} />
    </SessionContext.Provider>
  );
}

function Shell(props: { session: Session }) {
  const { path } = useLocation();
  const live = useLiveState();
  useEffect(() => startLive(), []);
  const signingOut = useAction();
  const admin = props.session.me.user.role === 'admin';
  const links: [string, string][] = [
    ['/', 'Incidents'],
    ['/alerts', 'Alerts'],
    ['/schedule', 'Schedule'],
    ['/stats', 'Statistics'],
    ['/escalation-policies', 'Escalation'],
    ['/heartbeats', 'Heartbeats'],
    ['/maintenance', 'Maintenance'],
    ...(admin ? ([['/people', 'People']] as [string, string][]) : []),
    ['/me', 'Me'],
  ];
  const active = (href: string) =>
    href === '/' ? path === '/' || path.startsWith('/incidents') : path === href;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          terdut
        </Link>
        <nav aria-label="Main">
          {links.map(([href, label]) => (
            <Link key={href} href={href} aria-current={active(href) ? 'page' : undefined}>
              {label}
            </Link>
          ))}
        </nav>
        <span class={`live live-${live}`} role="status" aria-live="polite">
          {live === 'live' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
        </span>
        <Button
          class="quiet"
          busy={signingOut.busy}
          onClick={() => void signingOut.run(() => props.session.signOut())}
        >
          Sign out
        </Button>
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorNote
          error={signingOut.error === undefined ? undefined : `You are still signed in. ${signingOut.error}`}
        />
        {/* Keyed by the path: a page that failed does not keep the next one from showing. */}
        <PageFailure key={path}>
          <Route path={path} admin={admin} />
        </PageFailure>
      </main>
    </>
  );
}

/**
 * A page that throws while it renders says so, instead of leaving the app
 * blank until a reload; the header and the other pages keep working.
 */
class PageFailure extends Component<{ children: ComponentChildren }, { error?: string }> {
  override state: { error?: string } = {};

  static override getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error.message : String(error) };
  }

  override render() {
    if (this.state.error === undefined) return this.props.children;
    return (
      <section class="page">
        <h1>This page failed</h1>
        <p role="alert">
          {this.state.error}. Reload the page, or <Link href="/">go to the incident queue</Link>.
        </p>
      </section>
    );
  }
}

function Route(props: { path: string; admin: boolean }) {
  const { path } = props;
  const incident = /^\/incidents\/(\d+)$/.exec(path);
  if (path === '/') return <QueuePage />;
  if (incident) return <IncidentPage id={Number(incident[1])} />;
  if (path === '/alerts') return <AlertsPage />;
  if (path === '/schedule') return <SchedulePage />;
  if (path === '/schedules') return <SchedulesPage />;
  const schedule = /^\/schedules\/(\d+)$/.exec(path);
  if (schedule) return <ScheduleDetailPage id={Number(schedule[1])} />;
  if (path === '/stats') return <StatsPage />;
  if (path === '/people') return props.admin ? <PeoplePage /> : <NotAllowed />;
  if (path === '/me') return <MePage />;
  if (path === '/escalation-policies') return <EscalationPoliciesPage />;
  if (path === '/heartbeats') return <HeartbeatsPage />;
  if (path === '/maintenance') return <MaintenancePage />;
  return (
    <section class="page">
      <h1>Page not found</h1>
      <p>
        Nothing lives at {path}. <Link href="/">Go to the incident queue</Link>.
      </p>
    </section>
  );
}

function NotAllowed() {
  return (
    <section class="page">
      <h1>Admins only</h1>
      <p>People and access are managed by admins. Ask one of them if you need a change.</p>
    </section>
  );
}

keepFocusWhenRemoved();
render(<App />, document.getElementById('app')!);
