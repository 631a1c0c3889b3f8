/**
 * Fills a terdut database with a large history in bulk SQL
 * (`INSERT … SELECT generate_series`), not through the API: the queue
 * benchmark measures reading, and a million alerts through HTTP would take
 * longer than the benchmark itself.
 *
 * Shape: incidents spread evenly over ~173 days (inside the 180-day default
 * retention), the newest `open` ones still open (a third acknowledged, a
 * tenth snoozed), the rest resolved 35 minutes after triggering, half of
 * those archived; `alertsPerIncident` alerts each, linked through
 * `incident_alerts`; timeline events for triggered, acknowledged and resolved
 * (not one `alert_added` per alert: no list reads them). Fingerprints are
 * 16 hex digits like Alertmanager's, but ascending, so the unique index is
 * appended to rather than split at random: the fill is a means, not the
 * measurement.
 */
import type { Database } from '../../packages/server/src/db/database.ts';

export interface QueueShape {
  incidents: number;
  alertsPerIncident: number;
  open: number;
}

/** Incidents per statement for alerts and links, so neither database builds one huge statement. */
const CHUNK = 10_000;

export async function fillQueue(
  db: Database,
  shape: QueueShape,
  adminId: number,
  now: Date,
  progress: (message: string) => void = () => {},
): Promise<void> {
  await db.query(
    `INSERT INTO incidents (group_key, title, group_labels, status, severity, severity_rank, triggered_at,
                            acknowledged_by, acknowledged_at, snoozed_until, resolved_at, resolution_source, archived_at)
     SELECT 'bench-' || g,
            'BenchAlert' || (g % 50) || ' on cluster-' || (g % 20),
            jsonb_build_object('alertname', 'BenchAlert' || (g % 50), 'cluster', 'cluster-' || (g % 20)),
            s.status,
            (ARRAY['info', 'warning', 'critical'])[1 + g % 3],
            (ARRAY[2, 3, 5])[1 + g % 3],
            t.triggered_at,
            CASE WHEN s.status = 'acknowledged' OR (s.status = 'resolved' AND g % 2 = 0) THEN $4::bigint END,
            CASE WHEN s.status = 'acknowledged' OR (s.status = 'resolved' AND g % 2 = 0)
                 THEN t.triggered_at + interval '4 minutes' END,
            CASE WHEN s.status <> 'resolved' AND g % 10 = 0 THEN $3::timestamptz + interval '1 hour' END,
            CASE WHEN s.status = 'resolved' THEN t.triggered_at + interval '35 minutes' END,
            CASE WHEN s.status = 'resolved' THEN (CASE WHEN g % 4 = 0 THEN 'manual' ELSE 'alerts' END) END,
            CASE WHEN s.status = 'resolved' AND g % 2 = 1
                 THEN least(t.triggered_at + interval '1 day', $3::timestamptz) END
       FROM generate_series(1, $1::int) AS g
       CROSS JOIN LATERAL (SELECT $3::timestamptz - ($1::int - g) * interval '150 seconds' AS triggered_at) t
       CROSS JOIN LATERAL (SELECT CASE WHEN g > $1::int - $2::int
                                       THEN CASE WHEN g % 3 = 0 THEN 'acknowledged' ELSE 'triggered' END
                                       ELSE 'resolved' END AS status) s`,
    [shape.incidents, shape.open, now, adminId],
  );
  progress(`${shape.incidents} incidents`);
  // Bulk-load practice: secondary indexes of the big tables are dropped for
  // the load and rebuilt once after it (from their own definitions), which is
  // several times faster than maintaining them row by row.
  const secondary = (
    await db.query<{ indexname: string; indexdef: string }>(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.schemaname = 'public' AND i.tablename IN ('alerts', 'incident_alerts', 'incident_events')
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    )
  ).rows;
  for (const index of secondary) await db.exec(`DROP INDEX ${index.indexname}`);
  const bounds = (
    await db.query<{ lo: number; hi: number }>('SELECT min(id) AS lo, max(id) AS hi FROM incidents')
  ).rows[0]!;
  for (let lo = bounds.lo; lo <= bounds.hi; lo += CHUNK) {
    const hi = Math.min(lo + CHUNK - 1, bounds.hi);
    await db.query(
      `INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
                           generator_url, received_at, last_seen_at, resolution_source, incident_id, archived_at)
       SELECT lpad(to_hex(i.id * 1000 + n), 16, '0'), i.group_key, i.group_labels->>'alertname',
              CASE WHEN i.status = 'resolved' THEN 'resolved' ELSE 'firing' END,
              i.group_labels || jsonb_build_object('instance', 'host-' || n, 'severity', i.severity, 'job', 'node'),
              jsonb_build_object('summary', (i.group_labels->>'alertname') || ' on host-' || n,
                                 'runbook_url', 'https://runbooks.example/' || (i.group_labels->>'alertname')),
              i.triggered_at - interval '1 minute', i.resolved_at, 'http://prometheus.example:9090/graph?g0.expr=up',
              i.triggered_at, coalesce(i.resolved_at, $3::timestamptz),
              CASE WHEN i.status = 'resolved' THEN 'alertmanager' END, i.id, i.archived_at
         FROM incidents i CROSS JOIN generate_series(1, $4::int) AS n
        WHERE i.id BETWEEN $1 AND $2`,
      [lo, hi, now, shape.alertsPerIncident],
    );
    await db.query(
      `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
       SELECT incident_id, id, starts_at, received_at FROM alerts WHERE incident_id BETWEEN $1 AND $2`,
      [lo, hi],
    );
    progress(`alerts of incidents ${lo}..${hi}`);
  }
  await db.query(
    `INSERT INTO incident_events (incident_id, type, user_id, detail, created_at)
     SELECT id, 'triggered', NULL, title, triggered_at FROM incidents
     UNION ALL
     SELECT id, 'acknowledged', acknowledged_by, NULL, acknowledged_at FROM incidents WHERE acknowledged_at IS NOT NULL
     UNION ALL
     SELECT id, 'resolved', NULL, NULL, resolved_at FROM incidents WHERE resolved_at IS NOT NULL`,
  );
  progress('timeline events');
  for (const index of secondary) await db.exec(index.indexdef);
  progress(`rebuilt ${secondary.length} indexes`);
  // Fresh statistics, as autovacuum would have them on a database that grew over months.
  await db.exec('VACUUM ANALYZE');
}

/**
 * Adds one open incident with `alerts` firing alerts (a storm folded into
 * one group), with the timeline intake would have written for it: one
 * `triggered` and one `alert_added` per alert. Its page is what
 * `GET /api/incidents/{id}` and `/timeline` answer; returns its id.
 */
export async function fillLargeIncident(db: Database, alerts: number, now: Date): Promise<number> {
  const groupKey = `bench-storm-${now.getTime()}`;
  const incident = (
    await db.query<{ id: number }>(
      `INSERT INTO incidents (group_key, title, group_labels, severity, severity_rank, triggered_at)
       VALUES ($1, 'BenchStorm on cluster-0', '{"alertname": "BenchStorm", "cluster": "cluster-0"}', 'critical', 5, $2)
       RETURNING id`,
      [groupKey, now],
    )
  ).rows[0]!.id;
  await db.query(
    `INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, generator_url,
                         received_at, last_seen_at, incident_id)
     SELECT 'storm' || lpad(to_hex($1::bigint * 100000 + n), 11, '0'), $2, 'BenchStorm', 'firing',
            jsonb_build_object('alertname', 'BenchStorm', 'cluster', 'cluster-0', 'instance', 'host-' || n,
                               'severity', 'critical', 'job', 'node'),
            jsonb_build_object('summary', 'BenchStorm on host-' || n, 'runbook_url', 'https://runbooks.example/BenchStorm'),
            $3::timestamptz - interval '1 minute', 'http://prometheus.example:9090/graph?g0.expr=up',
            $3::timestamptz + n * interval '1 millisecond', $3::timestamptz, $1
       FROM generate_series(1, $4::int) AS n`,
    [incident, groupKey, now, alerts],
  );
  await db.query(
    `INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
     SELECT incident_id, id, starts_at, received_at FROM alerts WHERE incident_id = $1`,
    [incident],
  );
  await db.query(
    `INSERT INTO incident_events (incident_id, type, alert_id, detail, created_at)
     SELECT $1, 'triggered', NULL, 'BenchStorm on cluster-0', $2::timestamptz
     UNION ALL
     SELECT incident_id, 'alert_added', id, 'BenchStorm ' || (labels->>'instance'), received_at
       FROM alerts WHERE incident_id = $1`,
    [incident, now],
  );
  await db.exec('ANALYZE incidents, alerts, incident_alerts, incident_events');
  return incident;
}
