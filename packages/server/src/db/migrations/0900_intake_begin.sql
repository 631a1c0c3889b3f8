-- The start of every Alertmanager notification in one round trip
-- (services/intake.ts, issue 15): take the group's lock, then lock and read
-- what the notification works on. It was four statements, each a round trip;
-- most notifications are small, so their cost was round trips.
--
-- A function rather than one statement with CTEs because of snapshots: in
-- READ COMMITTED a VOLATILE function's statements each see a fresh snapshot,
-- so everything read after the advisory lock includes what the group's
-- previous writer committed while we waited. One statement would read with
-- the snapshot it took before waiting.
--
-- Returns json: the group's open incident (or null), the alerts with these
-- fingerprints, the group's firing alerts last seen before p_stale_before
-- (both locked, in fingerprint order, as the step-by-step path locks them),
-- and the links of the carried alerts to incidents of the group, newest
-- incident first.
CREATE FUNCTION terdut_intake_begin(p_group_key text, p_fingerprints text[], p_stale_before timestamptz)
RETURNS json
LANGUAGE plpgsql VOLATILE
-- Planned for each call's values: a notification carries 1 to thousands of
-- fingerprints, and a plan cached while the tables were small (a fresh
-- install) would scan whole tables on every call until the next ANALYZE.
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  v_incident json;
  v_alert_ids bigint[];
  v_alerts json;
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

  SELECT coalesce(array_agg(x.id), '{}'), coalesce(json_agg(x ORDER BY x.fingerprint), '[]'::json)
    INTO v_alert_ids, v_alerts FROM (
    SELECT id, fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at, generator_url,
           received_at, last_seen_at, resolution_source, incident_id, archived_at
      FROM alerts WHERE fingerprint = ANY(p_fingerprints)
     ORDER BY fingerprint FOR UPDATE) x;

  SELECT coalesce(json_agg(x ORDER BY x.fingerprint), '[]'::json) INTO v_stale FROM (
    SELECT id, fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at, generator_url,
           received_at, last_seen_at, resolution_source, incident_id, archived_at
      FROM alerts WHERE group_key = p_group_key AND status = 'firing' AND last_seen_at < p_stale_before
     ORDER BY fingerprint FOR UPDATE) x;

  SELECT coalesce(json_agg(x ORDER BY x.incident_id DESC), '[]'::json) INTO v_links FROM (
    -- By the locked alerts' ids (the incident_alerts_alert index), as
    -- linksInGroup reads them: joined on fingerprints, the function's cached
    -- generic plan scanned every link of the history.
    SELECT ia.incident_id, ia.alert_id, ia.occurrence_starts_at
      FROM incident_alerts ia JOIN incidents i ON i.id = ia.incident_id
     WHERE i.group_key = p_group_key AND ia.alert_id = ANY(v_alert_ids)) x;

  RETURN json_build_object('incident', v_incident, 'alerts', v_alerts, 'stale', v_stale, 'links', v_links);
END;
$$;
