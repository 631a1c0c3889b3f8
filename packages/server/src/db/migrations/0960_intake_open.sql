-- A new alert group's first notification in one statement (services/intake.ts,
-- issue 15). Most groups are small, and their first notification opens an
-- incident: the full intake made that a transaction of ten round trips
-- (BEGIN, terdut_intake_begin, the alerts, the incident with its `triggered`
-- event, the policies, the escalation, the links, the `alert_added` events,
-- COMMIT). Here it is one call, in the call's own transaction.

-- Which escalation policies were in force, as a number that every change to
-- them moves. The intake routes a new incident with the policies it read
-- earlier and remembers (services/paging/policy-routing.ts, RoutingCache);
-- terdut_intake_open only uses that routing when the number it was read with
-- is still the current one, so a policy edit committed on any replica is
-- never routed past.
CREATE TABLE paging_routing (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version bigint NOT NULL
);
INSERT INTO paging_routing (version) VALUES (1);

CREATE FUNCTION terdut_paging_routing_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE paging_routing SET version = version + 1;
  RETURN NULL;
END;
$$;

CREATE TRIGGER paging_routing_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON escalation_policies
  FOR EACH STATEMENT EXECUTE FUNCTION terdut_paging_routing_changed();

-- It opens the incident only when it can prove the full intake would do
-- exactly that, under the same group lock every writer takes: the group has
-- no open incident, no carried alert is stored yet (so none has a link or an
-- earlier occurrence), and nothing of the group is stale (nothing to
-- expire). The caller sends only notifications whose alerts all fire, each
-- fingerprint once. Then the full intake would insert every alert, open an
-- incident (its severity the highest of the alerts'), start its escalation,
-- and add every alert to it with an `alert_added` event in the
-- notification's order; so does this.
--
-- Returns incident_id NULL, having changed nothing, when the group is not
-- new (the caller runs the full intake), and routing_current false when the
-- policies changed since the caller read them (it reads them again). A
-- carried alert inserted meanwhile by another group's notification fails
-- the call with a unique violation, which rolls it back whole.
CREATE FUNCTION terdut_intake_open(
  p_group_key text,
  p_fingerprints text[],
  -- One record per carried alert, in the notification's order (the
  -- columns of `alerts` a notification writes, and content_digest).
  p_alerts jsonb,
  p_title text,
  p_group_labels jsonb,
  p_severity text,
  p_severity_rank integer,
  p_routing_version bigint,
  p_policy_id bigint,
  p_policy jsonb,
  p_routing_labels jsonb,
  p_now timestamptz,
  p_stale_before timestamptz,
  OUT incident_id bigint,
  OUT routing_current boolean)
LANGUAGE plpgsql VOLATILE
-- Cached plans, unlike terdut_intake_begin's: every statement here finds
-- rows by an index whatever the values (no join with stored rows), and
-- planning each call's statements anew, with the foreign-key checks they
-- fire, cost a third of the call.
AS $$
DECLARE
  v_incident bigint;
BEGIN
  routing_current := true;
  PERFORM pg_advisory_xact_lock(hashtextextended(p_group_key, 0));

  PERFORM 1 FROM incidents i WHERE i.group_key = p_group_key AND i.status <> 'resolved';
  IF FOUND THEN
    RETURN;
  END IF;
  -- No LIMIT in these two: with one, a cached plan expects a match early
  -- in some other order and walks the table looking for one that is not there.
  PERFORM 1 FROM alerts a WHERE a.fingerprint = ANY(p_fingerprints);
  IF FOUND THEN
    RETURN;
  END IF;
  PERFORM 1 FROM alerts a
    WHERE a.group_key = p_group_key AND a.status = 'firing' AND a.last_seen_at < p_stale_before;
  IF FOUND THEN
    RETURN;
  END IF;
  IF (SELECT r.version FROM paging_routing r) IS DISTINCT FROM p_routing_version THEN
    routing_current := false;
    RETURN;
  END IF;

  INSERT INTO incidents (group_key, title, group_labels, triggered_at, severity, severity_rank)
  VALUES (p_group_key, p_title, p_group_labels, p_now, p_severity, p_severity_rank)
  RETURNING id INTO v_incident;
  INSERT INTO incident_events (incident_id, type, detail, created_at)
  VALUES (v_incident, 'triggered', p_title, p_now);
  -- The decision to page commits with the incident (paging/escalation-hooks.ts, startPaging).
  INSERT INTO escalations (incident_id, policy_id, policy, labels, state, due_at, updated_at)
  VALUES (v_incident, p_policy_id, p_policy, p_routing_labels, 'active', p_now, p_now);

  WITH carried AS (
    SELECT *
      FROM ROWS FROM (jsonb_to_recordset(p_alerts) AS (fingerprint text, group_key text, name text, status text,
             labels jsonb, annotations jsonb, starts_at timestamptz, ends_at timestamptz, generator_url text,
             resolution_source text, content_digest text))
           WITH ORDINALITY AS x(fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
             generator_url, resolution_source, content_digest, ord)
  ), inserted AS (
    -- In fingerprint order, as the full intake inserts (and so locks) them.
    INSERT INTO alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
                        generator_url, resolution_source, received_at, last_seen_at, content_digest, incident_id)
    SELECT fingerprint, group_key, name, status, labels, annotations, starts_at, ends_at,
           generator_url, resolution_source, p_now, p_now, content_digest, v_incident
      FROM carried ORDER BY fingerprint
    RETURNING id, fingerprint, name, starts_at
  ), linked AS (
    INSERT INTO incident_alerts (incident_id, alert_id, occurrence_starts_at, added_at)
    SELECT v_incident, id, starts_at, p_now FROM inserted
  )
  INSERT INTO incident_events (incident_id, type, alert_id, detail, created_at)
  SELECT v_incident, 'alert_added', inserted.id, coalesce(nullif(inserted.name, ''), inserted.fingerprint), p_now
    FROM inserted JOIN carried USING (fingerprint)
   ORDER BY carried.ord;

  incident_id := v_incident;
END;
$$;

-- The repeat call of migration 0950, with cached plans. Planned for each
-- call's values, two thirds of its time was planning. The one statement
-- that needed it (a join of the carried alerts with the stored ones, which
-- a plan cached while the table was small would run as a scan) is now a
-- scan of the fingerprint index whose rows are compared, in fingerprint
-- order, with the caller's arrays: the caller sends them sorted by
-- fingerprint (byte order), each fingerprint once.
CREATE OR REPLACE FUNCTION terdut_intake_repeat(p_group_key text, p_fingerprints text[], p_starts timestamptz[],
                                                p_ends timestamptz[], p_digests text[], p_now timestamptz,
                                                p_stale_before timestamptz)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  v_incident bigint;
  v_ids bigint[];
  v_fingerprints text[];
  v_starts timestamptz[];
  v_ends timestamptz[];
  v_digests text[];
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_group_key, 0));

  SELECT id INTO v_incident FROM incidents
   WHERE group_key = p_group_key AND status <> 'resolved'
     FOR NO KEY UPDATE;
  IF v_incident IS NULL THEN
    RETURN NULL;
  END IF;

  -- Something of the group to expire: the full intake does that.
  PERFORM 1 FROM alerts
    WHERE group_key = p_group_key AND status = 'firing' AND last_seen_at < p_stale_before;
  IF FOUND THEN
    RETURN NULL;
  END IF;

  -- Locked in fingerprint order, as the full intake locks them (no deadlock
  -- with a writer of another group that carries the same alert); compared
  -- after locking, so what is compared is what is committed.
  PERFORM 1 FROM alerts WHERE fingerprint = ANY(p_fingerprints) ORDER BY fingerprint FOR UPDATE;

  SELECT array_agg(a.id ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.fingerprint ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.starts_at ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.ends_at ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.content_digest ORDER BY a.fingerprint COLLATE "C")
    INTO v_ids, v_fingerprints, v_starts, v_ends, v_digests
    FROM alerts a
   WHERE a.fingerprint = ANY(p_fingerprints)
     AND a.status = 'firing'
     AND a.group_key = p_group_key
     AND EXISTS (SELECT 1 FROM incident_alerts ia
                  WHERE ia.incident_id = v_incident AND ia.alert_id = a.id
                    AND ia.occurrence_starts_at = a.starts_at);
  -- Every carried alert, each once, unchanged (arrays compare NULL ends as equal).
  IF v_fingerprints IS DISTINCT FROM p_fingerprints OR v_starts IS DISTINCT FROM p_starts
     OR v_ends IS DISTINCT FROM p_ends OR v_digests IS DISTINCT FROM p_digests THEN
    RETURN NULL;
  END IF;

  UPDATE alerts SET last_seen_at = p_now WHERE id = ANY(v_ids);
  RETURN v_incident;
END;
$$;
ALTER FUNCTION terdut_intake_repeat(text, text[], timestamptz[], timestamptz[], text[], timestamptz, timestamptz)
  RESET ALL;
