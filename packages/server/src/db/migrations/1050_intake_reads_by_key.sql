-- A flapping alert's history is no longer read on every notification
-- (bench/README.md, "A flapping alert's history"). The intake read every
-- link of each carried alert to incidents of its group: an alert that
-- fired and resolved 20,000 times (three times an hour for most of a year)
-- made each of its notifications read 20,000 links, send them to the
-- server as 1.9 MB of JSON and search them there, 11 times the cost of a
-- notification without history, growing without bound.
--
-- The intake asks of links one thing only: does the alert's current
-- occurrence (its starts_at) already belong to an incident, and which
-- (services/intake.ts: occurrenceLink, joinIncident's `member`, both by
-- equal starts_at). A link records the starts_at the alert had when it
-- joined, so the links that can answer are those with occurrence_starts_at
-- equal to the alert's: those are the only ones read now, found by an
-- index on (alert_id, occurrence_starts_at), one or two per alert at any
-- age. Read before a new occurrence is stored, they are the old
-- occurrence's, which the intake then finds no match in, as before; read
-- after, there are none. Compared at milliseconds, as the server's Dates
-- keep times, so that a stored time with microseconds still finds its
-- link. An equality, not a range, so that the planner's estimate of the
-- rows is right and it picks the index at every size of the table.
--
-- The new index serves everything the one on alert_id alone did (the
-- cascade when an alert is deleted, retention's check that an alert
-- belongs to no incident), so it replaces it.
--
-- And every plan the intake's calls keep reads only the rows it needs,
-- whatever the size of the tables when it was made. They keep their plans
-- per connection with whole-table scans priced out (migrations 1000,
-- 1030), which left them free to walk a whole index instead: made while a
-- fresh install's tables held a few rows and kept until the next ANALYZE,
-- the full intake's read of the group's stale alerts walked every alert in
-- fingerprint order (the order it locks them in), and the repeat's check
-- that each alert is a member of the open incident walked every link (a
-- few milliseconds per call at 20,000 rows, in proportion beyond;
-- db/intake-plans.test.ts now counts the rows read, not only whole-table
-- scans). The stale alerts are now found by the group's index first and
-- locked by fingerprint after, and the repeat's function may join only by
-- nested loops, each inner side looked up by key, as the links trigger
-- does since migration 0980.

CREATE INDEX incident_alerts_alert_occurrence ON incident_alerts (alert_id, occurrence_starts_at);
DROP INDEX incident_alerts_alert;

-- The links of these alerts' current occurrences (p_starts: each alert's
-- starts_at, in the order of p_alert_ids) to incidents of the group: what
-- the full intake's first call reads, and repositories/incident-alerts.ts
-- (currentOccurrenceLinks) for large notifications and the staleness
-- sweep. Looked up alert by alert: OFFSET 0 keeps the lookup a subquery
-- run for each alert, so every plan finds the links by the index on
-- (alert_id, occurrence_starts_at) and each link's incident by key. As a
-- join, the plan terdut_intake_begin kept from a fresh install's first
-- calls walked every link and, for each, every alert (3.4 s per call once
-- a flapping history of 20,000 incidents arrived before the next ANALYZE;
-- repositories/current-occurrence-links.test.ts). Plain SQL, so that it is
-- inlined into the statement that calls it and planned with it (and, in
-- terdut_intake_begin, kept with it).
CREATE FUNCTION terdut_current_occurrence_links(p_group_key text, p_alert_ids bigint[], p_starts timestamptz[])
RETURNS TABLE (incident_id bigint, alert_id bigint, occurrence_starts_at timestamptz)
LANGUAGE sql STABLE
AS $$
  SELECT l.incident_id, l.alert_id, l.occurrence_starts_at
    FROM unnest(p_alert_ids, p_starts) AS c(alert_id, starts_at)
   CROSS JOIN LATERAL (
     SELECT ia.incident_id, ia.alert_id, ia.occurrence_starts_at
       FROM incident_alerts ia
      WHERE ia.alert_id = c.alert_id
        AND ia.occurrence_starts_at = date_trunc('milliseconds', c.starts_at)
        AND (SELECT i.group_key FROM incidents i WHERE i.id = ia.incident_id) = p_group_key
     OFFSET 0) l
$$;

-- As in migration 0900, with the settings of migration 1030 (a replaced
-- function keeps none of its old ones), the links and the stale alerts
-- read as above.
CREATE OR REPLACE FUNCTION terdut_intake_begin(p_group_key text, p_fingerprints text[], p_stale_before timestamptz)
RETURNS json
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = auto
SET enable_seqscan = off
AS $$
DECLARE
  v_incident json;
  v_alert_ids bigint[];
  v_alert_starts timestamptz[];
  v_alerts json;
  v_stale_fingerprints text[];
  v_stale json;
  v_links json;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_group_key, 0));

  SELECT to_json(x) INTO v_incident FROM (
    SELECT i.id, i.group_key, i.title, i.group_labels, i.status, i.severity, i.severity_rank, i.triggered_at,
           i.acknowledged_by, ack.username AS acknowledged_by_username, i.acknowledged_at,
           i.assigned_to, asg.username AS assigned_to_username, i.snoozed_until,
           i.resolved_at, i.resolution_source, i.archived_at
      FROM incidents i
      LEFT JOIN users ack ON ack.id = i.acknowledged_by
      LEFT JOIN users asg ON asg.id = i.assigned_to
     WHERE i.group_key = p_group_key AND i.status <> 'resolved'
       FOR NO KEY UPDATE OF i) x;

  SELECT coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.starts_at), '{}'),
         coalesce(json_agg(x ORDER BY x.fingerprint), '[]'::json)
    INTO v_alert_ids, v_alert_starts, v_alerts FROM (
    SELECT id, fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at, generator_url,
           received_at, last_seen_at, resolution_source, incident_id, archived_at
      FROM alerts WHERE fingerprint = ANY(p_fingerprints)
     ORDER BY fingerprint FOR UPDATE) x;

  -- Found without an order (by the group's firing alerts), then locked in
  -- fingerprint order as the carried ones are: asked for in that order at
  -- once, a plan kept from small tables walked every alert by fingerprint.
  -- The conditions are asked again of each row as it is locked.
  SELECT coalesce(array_agg(a.fingerprint), '{}') INTO v_stale_fingerprints
    FROM alerts a WHERE a.group_key = p_group_key AND a.status = 'firing' AND a.last_seen_at < p_stale_before;
  SELECT coalesce(json_agg(x ORDER BY x.fingerprint), '[]'::json) INTO v_stale FROM (
    SELECT id, fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at, generator_url,
           received_at, last_seen_at, resolution_source, incident_id, archived_at
      FROM alerts
     WHERE fingerprint = ANY(v_stale_fingerprints)
       AND group_key = p_group_key AND status = 'firing' AND last_seen_at < p_stale_before
     ORDER BY fingerprint FOR UPDATE) x;

  SELECT coalesce(json_agg(x ORDER BY x.incident_id DESC), '[]'::json) INTO v_links
    FROM terdut_current_occurrence_links(p_group_key, v_alert_ids, v_alert_starts) x;

  RETURN json_build_object('incident', v_incident, 'alerts', v_alerts, 'stale', v_stale, 'links', v_links);
END;
$$;

-- The repeat (migrations 0950, 1000, 1040): its membership check, an
-- EXISTS on the links of the open incident, was kept as a merge join that
-- walked an index of every link. Only nested loops now, so each alert's
-- link is looked up by the links' primary key.
ALTER FUNCTION terdut_intake_repeat(text, text[], timestamptz[], timestamptz[], text[], timestamptz, timestamptz)
  SET enable_mergejoin = off;
ALTER FUNCTION terdut_intake_repeat(text, text[], timestamptz[], timestamptz[], text[], timestamptz, timestamptz)
  SET enable_hashjoin = off;
