-- The intake calls of migration 0960 with every statement's plan made once
-- per connection, and made so that it cannot go bad as alerts grows
-- (issue 15), as migration 0980 did for the links trigger.
--
-- terdut_intake_open (a new group's first notification) and
-- terdut_intake_repeat (an unchanged repeat) read alerts by fingerprint
-- and by group with EXECUTE, so that those reads were planned for every
-- call: a plan kept from a connection's first calls, made while alerts was
-- small, scanned the whole table on every call after (7 ms per call while
-- the bench filled it). Planning them cost about a fifth of the database's
-- time of a 1-alert new group (the intake call alone, 4 connections, four
-- interleaved rounds: 2,421 groups/s as 0960 wrote it, 3,004/s like this;
-- 10-alert groups 1,387 and 1,598/s; bench/README.md, "The intake calls,
-- planned once"). With scans of whole tables off for these two functions
-- alone, every plan left finds its rows by index at any size, so the reads
-- are ordinary statements again, planned once per connection. The setting
-- holds inside the functions only (and the triggers their statements fire);
-- it forbids no statement, it prices whole-table scans out where an index
-- serves. The same statements, locks and answers otherwise.

CREATE OR REPLACE FUNCTION terdut_intake_open(
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
SET enable_seqscan = off
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
  IF EXISTS (SELECT 1 FROM alerts a WHERE a.fingerprint = ANY(p_fingerprints))
     OR EXISTS (SELECT 1 FROM alerts a
                 WHERE a.group_key = p_group_key AND a.status = 'firing' AND a.last_seen_at < p_stale_before) THEN
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

-- The same for the repeat: its two reads of alerts planned once.
CREATE OR REPLACE FUNCTION terdut_intake_repeat(p_group_key text, p_fingerprints text[], p_starts timestamptz[],
                                                p_ends timestamptz[], p_digests text[], p_now timestamptz,
                                                p_stale_before timestamptz)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
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
  IF EXISTS (SELECT 1 FROM alerts a
              WHERE a.group_key = p_group_key AND a.status = 'firing' AND a.last_seen_at < p_stale_before) THEN
    RETURN NULL;
  END IF;

  -- Locked in fingerprint order, as the full intake locks them (no deadlock
  -- with a writer of another group that carries the same alert); compared
  -- after locking, so what is compared is what is committed.
  SELECT array_agg(a.id ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.fingerprint ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.starts_at ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.ends_at ORDER BY a.fingerprint COLLATE "C"),
         array_agg(a.content_digest ORDER BY a.fingerprint COLLATE "C")
    INTO v_ids, v_fingerprints, v_starts, v_ends, v_digests
    FROM (SELECT * FROM alerts WHERE fingerprint = ANY(p_fingerprints) ORDER BY fingerprint FOR UPDATE) a
   WHERE a.status = 'firing'
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
