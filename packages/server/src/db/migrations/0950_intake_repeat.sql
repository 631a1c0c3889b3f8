-- The steady state of Alertmanager in one statement (services/intake.ts,
-- issue 15): a group that keeps firing is notified again every
-- repeat_interval with exactly what it sent before. For such a repeat the
-- whole transaction (BEGIN, terdut_intake_begin, the "last seen" update,
-- COMMIT) only moves last_seen_at; here it is one call, in the call's own
-- transaction.

-- What only a notification writes about an alert (labels, annotations,
-- generator URL, start), digested by the intake on every insert, update and
-- "last seen" (domain/alerts.ts, alertContentDigest), so a repeat compares
-- one short text per alert instead of its documents. NULL (rows from before
-- this migration) until the next notification of the alert: never a repeat.
ALTER TABLE alerts ADD COLUMN content_digest text;

-- It does the repeat only when it can prove it is one, under the same
-- group lock every writer takes: the group has an open incident, nothing of
-- the group is stale, and every carried alert is stored firing in this
-- group, with the same start, end and content digest, and is already a
-- member of that incident for this occurrence. That is exactly when the full
-- intake would classify every alert `unchanged` and change nothing but
-- last_seen_at. Anything else returns NULL having changed nothing, and the
-- caller runs the full intake.
--
-- The arrays are parallel, one element per carried alert, all firing.
-- Returns the open incident's id, or NULL.
CREATE FUNCTION terdut_intake_repeat(p_group_key text, p_fingerprints text[], p_starts timestamptz[],
                                     p_ends timestamptz[], p_digests text[], p_now timestamptz,
                                     p_stale_before timestamptz)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  v_incident bigint;
  v_ids bigint[];
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
    WHERE group_key = p_group_key AND status = 'firing' AND last_seen_at < p_stale_before
    LIMIT 1;
  IF FOUND THEN
    RETURN NULL;
  END IF;

  -- Locked in fingerprint order, as the full intake locks them (no deadlock
  -- with a writer of another group that carries the same alert); compared
  -- after locking, so what is compared is what is committed.
  PERFORM 1 FROM alerts WHERE fingerprint = ANY(p_fingerprints) ORDER BY fingerprint FOR UPDATE;

  SELECT array_agg(a.id) INTO v_ids
    FROM unnest(p_fingerprints, p_starts, p_ends, p_digests) AS x (fingerprint, starts_at, ends_at, digest)
    JOIN alerts a ON a.fingerprint = x.fingerprint
   WHERE a.status = 'firing'
     AND a.group_key = p_group_key
     AND a.starts_at = x.starts_at
     AND a.ends_at IS NOT DISTINCT FROM x.ends_at
     AND a.content_digest = x.digest
     AND EXISTS (SELECT 1 FROM incident_alerts ia
                  WHERE ia.incident_id = v_incident AND ia.alert_id = a.id
                    AND ia.occurrence_starts_at = a.starts_at);
  -- Every carried alert, each once (a fingerprint carried twice: the full intake keeps the last).
  IF coalesce(cardinality(v_ids), 0) <> cardinality(p_fingerprints)
     OR (SELECT count(DISTINCT f) FROM unnest(p_fingerprints) f) <> cardinality(p_fingerprints) THEN
    RETURN NULL;
  END IF;

  UPDATE alerts SET last_seen_at = p_now WHERE id = ANY(v_ids);
  RETURN v_incident;
END;
$$;
