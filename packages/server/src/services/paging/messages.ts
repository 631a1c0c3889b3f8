import type { IncidentRow } from '../../repositories/incidents.ts';
import type { AlertRow } from '../../repositories/alerts.ts';
import type { PageMessage } from './providers.ts';
import type { HeartbeatRow } from '../../repositories/heartbeats.ts';
import type { FoldedIncident } from '../../repositories/page-deliveries.ts';
import { severityRank } from '../severity.ts';
import { formatDuration } from '../format-duration.ts';
import { heartbeatOfGroup } from './heartbeats.ts';

/** What a message is about. */
export interface MessageContext {
  purpose: 'page' | 'resolved' | 'update' | 'summary' | 'test';
  /** For a summary: the open incidents whose pages were folded into it. */
  folded?: FoldedIncident[];
  incident?: IncidentRow;
  alerts?: AlertRow[];
  person: { id: number; username: string };
  /** 1-based step and 0-based repeat pass, for pages. */
  step?: number;
  repeat?: number;
  /** TERDUT_PUBLIC_URL without a trailing slash; undefined: no links, no actions. */
  publicUrl: string | undefined;
  /** A capability token for the Acknowledge action (pages only, with a public URL). */
  acknowledgeToken?: string;
  /** For a missed-heartbeat incident's page: its heartbeat, unless it was deleted since. */
  heartbeat?: Pick<HeartbeatRow, 'id' | 'name' | 'interval_ms' | 'grace_ms' | 'last_seen_at' | 'matchers'>;
}

/**
 * ntfy priority from the incident's severity, ranked as the incident ranks
 * it (severity.ts): critical/page 5, high/error 4, warning/warn/medium 3,
 * anything else 2.
 */
export function priorityOf(severity: string | null | undefined): number {
  return Math.max(2, Math.min(5, severityRank(severity ?? '')));
}

/**
 * ntfy priority of a missed heartbeat's page: high (sound and a pop-over),
 * as heartbeat alerts are in incident tools, whatever the severities. It
 * has no severity of its own, and it means alerts may not be reaching
 * terdut at all, so it must wake whoever is on call.
 */
export const MISSED_HEARTBEAT_PRIORITY = 4;

const MAX_LISTED_ALERTS = 5;

/** Composes the title, text, priority, links and the webhook body of one message. */
export function composeMessage(context: MessageContext): PageMessage {
  const { incident, person, publicUrl } = context;
  if (context.purpose === 'summary') {
    const folded = context.folded ?? [];
    const listed = folded.slice(0, 20).map((entry) => `#${entry.id} ${entry.title}`);
    const more = folded.length > 20 ? [`… and ${folded.length - 20} more`] : [];
    // The queue, showing what is still unacknowledged: the web app has no page at /incidents.
    const incidentsUrl = publicUrl === undefined ? undefined : `${publicUrl}/?filter=triggered`;
    return {
      title: `${folded.length} more incident${folded.length === 1 ? '' : 's'} for you`,
      text: [`Too many pages at once; these were folded into this one:`, ...listed, ...more].join('\n'),
      // As urgent as the most urgent page folded into it, a missed heartbeat's included.
      priority: Math.max(
        2,
        ...folded.map((entry) =>
          entry.missed_heartbeat
            ? Math.max(MISSED_HEARTBEAT_PRIORITY, priorityOf(entry.severity))
            : priorityOf(entry.severity),
        ),
      ),
      tags: ['rotating_light', 'stack'],
      ...(incidentsUrl !== undefined
        ? { incidentUrl: incidentsUrl, linkLabel: 'Open the unacknowledged incidents' }
        : {}),
      webhookBody: {
        version: '1',
        event: 'summary',
        incidents: folded.map((entry) => ({
          id: entry.id,
          title: entry.title,
          severity: entry.severity,
          ...(publicUrl !== undefined ? { url: `${publicUrl}/incidents/${entry.id}` } : {}),
        })),
        person: { id: person.id, username: person.username },
      },
    };
  }
  if (context.purpose === 'test' || incident === undefined) {
    return {
      title: 'terdut test message',
      text: `This is a test page for ${person.username}. If you can read this, terdut can reach you here.`,
      priority: 3,
      tags: ['white_check_mark'],
      webhookBody: { version: '1', event: 'test', person: { id: person.id, username: person.username } },
    };
  }
  const firing = (context.alerts ?? []).filter((alert) => alert.status === 'firing');
  const incidentUrl = publicUrl === undefined ? undefined : `${publicUrl}/incidents/${incident.id}`;
  const acknowledgeUrl = publicUrl === undefined ? undefined : `${publicUrl}/api/paging/acknowledge`;
  const acknowledgeBody =
    context.acknowledgeToken === undefined ? undefined : JSON.stringify({ token: context.acknowledgeToken });

  if (context.purpose === 'resolved') {
    return {
      title: `Resolved: ${incident.title}`,
      text: `Incident #${incident.id} is resolved; paging for it has stopped.`,
      priority: 2,
      tags: ['white_check_mark'],
      ...(incidentUrl !== undefined ? { incidentUrl } : {}),
      webhookBody: webhookBody(context, incidentUrl, undefined, undefined),
    };
  }

  if (context.purpose === 'update') {
    const names = [...new Set(firing.map((alert) => alert.name || alert.fingerprint))];
    return {
      title: `Update: ${incident.title}`,
      text:
        `While you have incident #${incident.id} acknowledged, a new alert joined it` +
        `${incident.severity ? ` (severity now ${incident.severity})` : ''}. ` +
        `${firing.length} alert${firing.length === 1 ? '' : 's'} firing: ${names.join(', ')}`,
      priority: Math.min(priorityOf(incident.severity), 3),
      tags: ['information_source'],
      ...(incidentUrl !== undefined ? { incidentUrl } : {}),
      webhookBody: webhookBody(context, incidentUrl, undefined, firing),
    };
  }

  const lines: string[] = [];
  const count = firing.length;
  const names = [...new Set(firing.map((alert) => alert.name || alert.fingerprint))];
  // A missed heartbeat has no alerts: "no alert is firing" would read as all clear.
  const missedHeartbeat = heartbeatOfGroup(incident.group_key) !== undefined;
  if (missedHeartbeat) lines.push(...missedHeartbeatLines(incident, context.heartbeat));
  else {
    lines.push(
      count === 0
        ? 'No alert is firing right now.'
        : `${count} alert${count === 1 ? '' : 's'} firing: ${names.join(', ')}`,
    );
  }
  for (const alert of firing.slice(0, MAX_LISTED_ALERTS)) {
    const about = alert.annotations.summary ?? alert.annotations.description;
    const instance = alert.labels.instance;
    const parts = [
      alert.name || alert.fingerprint,
      instance ? `on ${instance}` : '',
      about ? `: ${about}` : '',
    ];
    lines.push(
      `- ${parts
        .filter((part) => part !== '')
        .join(' ')
        .replace(' :', ':')}`,
    );
  }
  if (firing.length > MAX_LISTED_ALERTS) lines.push(`… and ${firing.length - MAX_LISTED_ALERTS} more`);
  const acknowledge =
    acknowledgeUrl !== undefined && acknowledgeBody !== undefined
      ? {
          url: acknowledgeUrl,
          method: 'POST' as const,
          headers: { 'content-type': 'application/json' },
          body: acknowledgeBody,
        }
      : undefined;
  return {
    title: incident.title,
    text: lines.join('\n'),
    priority: missedHeartbeat
      ? Math.max(MISSED_HEARTBEAT_PRIORITY, priorityOf(incident.severity))
      : priorityOf(incident.severity),
    tags: ['rotating_light', ...(incident.severity ? [incident.severity] : [])],
    ...(incidentUrl !== undefined ? { incidentUrl } : {}),
    ...(acknowledge !== undefined ? { acknowledge } : {}),
    ...(acknowledge !== undefined
      ? {
          acknowledgePage: `${publicUrl}/paging/acknowledge?token=${encodeURIComponent(context.acknowledgeToken!)}`,
        }
      : {}),
    webhookBody: webhookBody(context, incidentUrl, acknowledge, firing),
  };
}

/** What a missed heartbeat's page says: which heartbeat, since when, and why it matters. */
function missedHeartbeatLines(incident: IncidentRow, heartbeat: MessageContext['heartbeat']): string[] {
  if (heartbeat === undefined) {
    return [`Heartbeat ${incident.group_labels.heartbeat ?? '?'} was missed (it has been deleted since).`];
  }
  return [
    `Heartbeat ${heartbeat.name} has had no sign of life since ${heartbeat.last_seen_at.toISOString()} ` +
      `(expected every ${formatDuration(Number(heartbeat.interval_ms))}, grace ${formatDuration(Number(heartbeat.grace_ms))}).`,
    heartbeat.matchers.length > 0
      ? `No alert matching ${heartbeat.matchers.join(', ')} has arrived since: Prometheus, Alertmanager ` +
        'or their way to terdut may be down, and then other alerts page nobody either.'
      : `Nothing has pinged it since (POST /api/heartbeats/${heartbeat.id}/ping): what pings it has stopped or fails.`,
  ];
}

/** The outgoing webhook's JSON body, documented in the README ("Outgoing webhook"). */
function webhookBody(
  context: MessageContext,
  incidentUrl: string | undefined,
  acknowledge: PageMessage['acknowledge'],
  firing: AlertRow[] | undefined,
): Record<string, unknown> {
  const incident = context.incident!;
  return {
    version: '1',
    event: context.purpose,
    incident: {
      id: incident.id,
      group_key: incident.group_key,
      title: incident.title,
      status: incident.status,
      severity: incident.severity,
      group_labels: incident.group_labels,
      triggered_at: incident.triggered_at.toISOString(),
      ...(incidentUrl !== undefined ? { url: incidentUrl } : {}),
    },
    ...(firing !== undefined
      ? {
          alerts: firing.map((alert) => ({
            name: alert.name,
            fingerprint: alert.fingerprint,
            labels: alert.labels,
            annotations: alert.annotations,
            starts_at: alert.starts_at.toISOString(),
          })),
        }
      : {}),
    ...(context.heartbeat !== undefined
      ? {
          heartbeat: {
            id: context.heartbeat.id,
            name: context.heartbeat.name,
            last_seen_at: context.heartbeat.last_seen_at.toISOString(),
            missed_since: new Date(
              context.heartbeat.last_seen_at.getTime() + Number(context.heartbeat.interval_ms),
            ).toISOString(),
            interval: formatDuration(Number(context.heartbeat.interval_ms)),
            grace: formatDuration(Number(context.heartbeat.grace_ms)),
          },
        }
      : {}),
    ...(context.step !== undefined ? { step: context.step, repeat: context.repeat ?? 0 } : {}),
    person: { id: context.person.id, username: context.person.username },
    ...(acknowledge !== undefined ? { acknowledge } : {}),
  };
}
