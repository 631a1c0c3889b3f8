import type { AlertQuery } from '@terdut/client';
import { client } from '../api.ts';
import { Link, useLocation } from '../router.tsx';
import { useLive } from '../live.ts';
import { ErrorNote, formatTime, LoadingNote, Page, useData, useSession } from '../ui.tsx';

const FILTERS: { key: string; label: string; query: AlertQuery }[] = [
  { key: 'all', label: 'All', query: {} },
  { key: 'firing', label: 'Firing', query: { status: 'firing' } },
  { key: 'resolved', label: 'Resolved', query: { status: 'resolved' } },
  { key: 'archived', label: 'Archived', query: { archived: true } },
];

/** The alert feed, newest first, each linked to its incident. */
export function AlertsPage() {
  const { info } = useSession();
  const { query } = useLocation();
  const filter = FILTERS.find((candidate) => candidate.key === query.get('filter')) ?? FILTERS[0]!;
  const alerts = useData(() => client.alerts.list({ ...filter.query, limit: 200 }), [filter.key]);
  useLive((change) => change.topic === 'alerts', alerts.reload);
  return (
    <Page title="Alerts">
      <nav aria-label="Alert filters" class="filters">
        {FILTERS.map((candidate) => (
          <Link
            key={candidate.key}
            href={candidate.key === 'all' ? '/alerts' : `/alerts?filter=${candidate.key}`}
            aria-current={candidate.key === filter.key ? 'true' : undefined}
          >
            {candidate.label}
          </Link>
        ))}
      </nav>
      <p class="muted">Times are in {info.time_zone}.</p>
      <ErrorNote error={alerts.error} />
      <LoadingNote loaded={alerts} />
      {alerts.data?.length === 0 && <p class="empty">No alerts here.</p>}
      <ul class="queue">
        {(alerts.data ?? []).map((alert) => (
          <li key={alert.id} class="row">
            <div class="row-main">
              <span class={`badge alert-${alert.status}`}>{alert.status}</span>
              <strong>{alert.name}</strong>
              {alert.labels.severity && (
                <span class={`badge sev-${alert.labels.severity}`}>{alert.labels.severity}</span>
              )}
            </div>
            <div class="row-meta">
              <span>since {formatTime(alert.starts_at, info.time_zone)}</span>
              {alert.ends_at && <span>ended {formatTime(alert.ends_at, info.time_zone)}</span>}
              {alert.labels.instance && <span>{alert.labels.instance}</span>}
              {alert.incident_id !== undefined && (
                <Link href={`/incidents/${alert.incident_id}`}>incident #{alert.incident_id}</Link>
              )}
            </div>
          </li>
        ))}
      </ul>
    </Page>
  );
}
