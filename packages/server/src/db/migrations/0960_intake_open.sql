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
-- Not planned anew for every call (terdut_intake_begin is): that also
-- planned every foreign-key check its inserts fire, a third of the call.
-- Only the two reads of alerts that a plan cached on a small table would
-- run as a scan are planned for each call, with EXECUTE (measured: a
-- cached one took 7 ms per call while the bench filled the table).
AS $$
DECLARE
  v_incident bigint;
  v_taken boolean;
BEGIN
  routing_current := true;
  PERFORM pg_advisory_xact_lock(hashtextextended(p_group_key, 0));

  PERFORM 1 FROM incidents i WHERE i.group_key = p_group_key AND i.status <> 'resolved';
  IF FOUND THEN
    RETURN;
  END IF;
  EXECUTE 'SELECT EXISTS (SELECT 1 FROM alerts WHERE fingerprint = ANY($1))
              OR EXISTS (SELECT 1 FROM alerts WHERE group_key = $2 AND status = ''firing'' AND last_seen_at < $3)'
     INTO v_taken USING p_fingerprints, p_group_key, p_stale_before;
  IF v_taken THEN
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

-- The repeat call of migration 0950, planned less. Planned anew for each
-- call, two thirds of its time was planning. Now only its two reads of
-- alerts are (EXECUTE; a plan cached while the table was small would scan
-- it), and the join of the carried alerts with the stored ones is gone:
-- the stored ones, found by fingerprint, are compared in fingerprint order
-- with the caller's arrays, which it sends sorted by fingerprint (byte
-- order), each fingerprint once.
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
  v_stale boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_group_key, 0));

  SELECT id INTO v_incident FROM incidents
   WHERE group_key = p_group_key AND status <> 'resolved'
     FOR NO KEY UPDATE;
  IF v_incident IS NULL THEN
    RETURN NULL;
  END IF;

  -- Something of the group to expire: the full intake does that.
  EXECUTE 'SELECT EXISTS (SELECT 1 FROM alerts WHERE group_key = $1 AND status = ''firing'' AND last_seen_at < $2)'
     INTO v_stale USING p_group_key, p_stale_before;
  IF v_stale THEN
    RETURN NULL;
  END IF;

  -- Locked in fingerprint order, as the full intake locks them (no deadlock
  -- with a writer of another group that carries the same alert); compared
  -- after locking, so what is compared is what is committed.
  EXECUTE 'SELECT array_agg(a.id ORDER BY a.fingerprint COLLATE "C"),
                  array_agg(a.fingerprint ORDER BY a.fingerprint COLLATE "C"),
                  array_agg(a.starts_at ORDER BY a.fingerprint COLLATE "C"),
                  array_agg(a.ends_at ORDER BY a.fingerprint COLLATE "C"),
                  array_agg(a.content_digest ORDER BY a.fingerprint COLLATE "C")
             FROM (SELECT * FROM alerts WHERE fingerprint = ANY($1) ORDER BY fingerprint FOR UPDATE) a
            WHERE a.status = ''firing''
              AND a.group_key = $2
              AND EXISTS (SELECT 1 FROM incident_alerts ia
                           WHERE ia.incident_id = $3 AND ia.alert_id = a.id
                             AND ia.occurrence_starts_at = a.starts_at)'
     INTO v_ids, v_fingerprints, v_starts, v_ends, v_digests
    USING p_fingerprints, p_group_key, v_incident;
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

-- The links trigger of migration 0800 with its statement planned for each
-- call: it joins the new links with alerts and names no parameter, so its
-- plan was made once per connection and kept, and one made while alerts was
-- small scanned the whole table for every link (2.7 ms per notification in
-- the bench). The same statements otherwise.
CREATE OR REPLACE FUNCTION stats_count_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE 'INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
             SELECT stats_quarter(l.occurrence_starts_at), a.name, count(*)
               FROM new_links l JOIN alerts a ON a.id = l.alert_id
              GROUP BY 1, 2';
  ELSE
    EXECUTE 'INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
             SELECT stats_quarter(l.occurrence_starts_at), a.name, -count(*)
               FROM old_links l JOIN alerts a ON a.id = l.alert_id
              GROUP BY 1, 2';
  END IF;
  RETURN NULL;
END $$;
