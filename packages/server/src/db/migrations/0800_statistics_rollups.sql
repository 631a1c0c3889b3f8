-- Rollups for the statistics (GET /api/stats/*), so that a request reads a
-- few thousand summary rows instead of scanning the retained history
-- (bench:queue: 0.3-4.1 s at 100k incidents / 1M alerts before, see
-- bench/README.md). repositories/statistics.ts reads them.
--
-- Kept by triggers, in the same transaction as the rows they summarise,
-- whoever writes those rows: the intake, people acting on incidents,
-- retention deleting old incidents (and their links by cascade), or an
-- administrator with psql. The counting rules are the README's: every stored
-- row counts, archived or not; an occurrence is one incident_alerts row,
-- timed by occurrence_starts_at and named by its alert's name.
--
-- No hot rows. A counter row updated by every intake transaction would
-- serialise intake across groups (two groups firing the same alertname in
-- the same quarter of an hour, or any two new incidents for a single totals
-- row): the row lock is held until commit. So the triggers only APPEND to
-- *_deltas tables (no index, no unique key: nothing to wait for), and a
-- background job (StatisticsService.foldDeltas) folds the deltas into the
-- rollups now and then, one replica at a time. Readers add the rollup and the
-- deltas not folded yet, in one snapshot; folding moves rows from one to the
-- other in one transaction, so a reader sees the same sum before and after.
--
-- Statement-level triggers with transition tables for INSERT and DELETE (one
-- delta row per statement and key, however many rows it touched); row-level
-- triggers with a WHEN clause for UPDATE, because a trigger with transition
-- tables cannot name columns and would run for every snooze or severity
-- change: with WHEN, PostgreSQL evaluates the condition itself and calls no
-- function unless a counted column changed.

-- Occurrences by alert name (GET /api/stats/alerts/top).
CREATE TABLE stats_occurrences_by_name (
  name text PRIMARY KEY,
  occurrences bigint NOT NULL
);

-- Occurrences by the quarter hour (UTC) their occurrence_starts_at falls in
-- (GET /api/stats/alerts/by-hour and by-day), numbered from 1970-01-01
-- 00:00 UTC (floor(epoch / 900); integers, because the reader does
-- arithmetic on them for ~17,000 quarters of 180 days). Zone offsets in use
-- are whole quarter hours (+05:30 Kolkata, +05:45 Kathmandu, +12:45 Chatham)
-- and change at quarter-hour instants, so every instant of a quarter has the
-- same local hour and weekday in every zone: TERDUT_TIMEZONE is applied
-- when reading and can change without a rebuild. Where it is not so (a
-- historical local mean time like +05:53:28, a transition at 00:01), the
-- reader sees it and counts that quarter's rows one by one
-- (repositories/statistics.ts). occurrences is an integer too: a quarter
-- holds far fewer than 2^31, and sum(integer) adds up in bigint where
-- sum(bigint) adds up in numeric, several times slower.
CREATE TABLE stats_occurrences_by_quarter (
  quarter integer PRIMARY KEY,
  occurrences integer NOT NULL
);

-- quarter is NULL for an occurrence at ±infinity: extract(hour ...) of it is
-- NULL, so it counts by name only.
CREATE TABLE stats_occurrence_deltas (
  quarter integer,
  name text NOT NULL,
  occurrences integer NOT NULL
);

-- Alert rows, and incidents by status with the sums behind MTTA and MTTR
-- (seconds as numeric, exactly what avg(extract(epoch FROM ...)) adds up).
CREATE TABLE stats_totals (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  alerts bigint NOT NULL DEFAULT 0,
  incidents bigint NOT NULL DEFAULT 0,
  triggered bigint NOT NULL DEFAULT 0,
  acknowledged bigint NOT NULL DEFAULT 0,
  resolved bigint NOT NULL DEFAULT 0,
  -- Incidents with an acknowledged_at, and the sum of acknowledged_at - triggered_at.
  acknowledgements bigint NOT NULL DEFAULT 0,
  acknowledge_seconds numeric NOT NULL DEFAULT 0,
  -- The sum of resolved_at - triggered_at over resolved incidents.
  resolve_seconds numeric NOT NULL DEFAULT 0,
  -- Moves whenever the occurrence rollups change (a fold, a TRUNCATE), in
  -- the same transaction: a server may keep what it computed from them
  -- until this moves, and add only the deltas.
  occurrence_generation bigint NOT NULL DEFAULT 0
);

CREATE TABLE stats_total_deltas (
  alerts bigint NOT NULL DEFAULT 0,
  incidents bigint NOT NULL DEFAULT 0,
  triggered bigint NOT NULL DEFAULT 0,
  acknowledged bigint NOT NULL DEFAULT 0,
  resolved bigint NOT NULL DEFAULT 0,
  acknowledgements bigint NOT NULL DEFAULT 0,
  acknowledge_seconds numeric NOT NULL DEFAULT 0,
  resolve_seconds numeric NOT NULL DEFAULT 0
);

-- The number of the quarter hour an instant falls in; NULL for ±infinity.
CREATE FUNCTION stats_quarter(instant timestamptz) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN isfinite(instant) THEN floor(extract(epoch FROM instant) / 900)::integer END;

-- incident_alerts: occurrences, named by the alert's current name. When an
-- alert is deleted first (its links go by cascade), its BEFORE DELETE
-- trigger has already taken its links out, so the join skips them here.
CREATE FUNCTION stats_count_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
    SELECT stats_quarter(l.occurrence_starts_at), a.name, count(*)
      FROM new_links l JOIN alerts a ON a.id = l.alert_id
     GROUP BY 1, 2;
  ELSE
    INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
    SELECT stats_quarter(l.occurrence_starts_at), a.name, -count(*)
      FROM old_links l JOIN alerts a ON a.id = l.alert_id
     GROUP BY 1, 2;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION stats_move_link() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
  SELECT stats_quarter(OLD.occurrence_starts_at), a.name, -1 FROM alerts a WHERE a.id = OLD.alert_id
  UNION ALL
  SELECT stats_quarter(NEW.occurrence_starts_at), a.name, 1 FROM alerts a WHERE a.id = NEW.alert_id;
  RETURN NULL;
END $$;

CREATE FUNCTION stats_forget_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM stats_occurrence_deltas;
  DELETE FROM stats_occurrences_by_name;
  DELETE FROM stats_occurrences_by_quarter;
  UPDATE stats_totals SET occurrence_generation = occurrence_generation + 1;
  RETURN NULL;
END $$;

-- alerts: rows, and the occurrences of an alert that is renamed (same
-- fingerprint, another alertname) or deleted with its links. A rename moves
-- the alert's links as they are at the end of the statement, and the links
-- trigger names new links by the name at the end of their statement: exact
-- as long as one statement does not both rename an alert and link it (the
-- intake does the two in separate statements; a single data-modifying CTE
-- doing both would move the new link from the old name too).
CREATE FUNCTION stats_count_alerts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO stats_total_deltas (alerts) SELECT count(*) FROM new_alerts HAVING count(*) > 0;
  ELSE
    INSERT INTO stats_total_deltas (alerts) SELECT -count(*) FROM old_alerts HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION stats_rename_alert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
  SELECT l.quarter, v.name, v.sign * count(*)
    FROM (SELECT stats_quarter(occurrence_starts_at) AS quarter FROM incident_alerts WHERE alert_id = NEW.id) l
    CROSS JOIN (VALUES (OLD.name, -1), (NEW.name, 1)) AS v(name, sign)
   GROUP BY l.quarter, v.name, v.sign;
  RETURN NULL;
END $$;

CREATE FUNCTION stats_forget_alert_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_occurrence_deltas (quarter, name, occurrences)
  SELECT stats_quarter(occurrence_starts_at), OLD.name, -count(*)
    FROM incident_alerts WHERE alert_id = OLD.id
   GROUP BY 1;
  RETURN OLD;
END $$;

CREATE FUNCTION stats_forget_alerts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE stats_total_deltas SET alerts = 0 WHERE alerts <> 0;
  UPDATE stats_totals SET alerts = 0;
  RETURN NULL;
END $$;

-- incidents: by status, and the MTTA / MTTR sums. `sign` is 1 for a row
-- that now exists, -1 for one that no longer does. (Written out in each
-- function rather than shared through an SQL function: a composite-returning
-- function in FROM is not inlined, and calling it costs more than the rest.)
CREATE FUNCTION stats_count_incidents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO stats_total_deltas (incidents, triggered, acknowledged, resolved, acknowledgements,
                                    acknowledge_seconds, resolve_seconds)
    SELECT sum(c.sign),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'triggered'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'acknowledged'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'resolved'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
           coalesce(sum(c.sign * extract(epoch FROM c.acknowledged_at - c.triggered_at))
                    FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
           coalesce(sum(c.sign * extract(epoch FROM c.resolved_at - c.triggered_at))
                    FILTER (WHERE c.status = 'resolved'), 0)
      FROM (SELECT 1 AS sign, status, triggered_at, acknowledged_at, resolved_at FROM new_incidents) c
    HAVING count(*) > 0;
  ELSE
    INSERT INTO stats_total_deltas (incidents, triggered, acknowledged, resolved, acknowledgements,
                                    acknowledge_seconds, resolve_seconds)
    SELECT sum(c.sign),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'triggered'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'acknowledged'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'resolved'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
           coalesce(sum(c.sign * extract(epoch FROM c.acknowledged_at - c.triggered_at))
                    FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
           coalesce(sum(c.sign * extract(epoch FROM c.resolved_at - c.triggered_at))
                    FILTER (WHERE c.status = 'resolved'), 0)
      FROM (SELECT -1 AS sign, status, triggered_at, acknowledged_at, resolved_at FROM old_incidents) c
    HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION stats_move_incident() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_total_deltas (incidents, triggered, acknowledged, resolved, acknowledgements,
                                  acknowledge_seconds, resolve_seconds)
  SELECT sum(c.sign),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'triggered'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'acknowledged'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.status = 'resolved'), 0),
           coalesce(sum(c.sign) FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
           coalesce(sum(c.sign * extract(epoch FROM c.acknowledged_at - c.triggered_at))
                    FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
           coalesce(sum(c.sign * extract(epoch FROM c.resolved_at - c.triggered_at))
                    FILTER (WHERE c.status = 'resolved'), 0)
    FROM (VALUES (-1, OLD.status, OLD.triggered_at, OLD.acknowledged_at, OLD.resolved_at),
                 (1, NEW.status, NEW.triggered_at, NEW.acknowledged_at, NEW.resolved_at))
         AS c (sign, status, triggered_at, acknowledged_at, resolved_at);
  RETURN NULL;
END $$;

CREATE FUNCTION stats_forget_incidents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM stats_total_deltas WHERE alerts = 0;
  UPDATE stats_total_deltas
     SET incidents = 0, triggered = 0, acknowledged = 0, resolved = 0, acknowledgements = 0,
         acknowledge_seconds = 0, resolve_seconds = 0;
  UPDATE stats_totals
     SET incidents = 0, triggered = 0, acknowledged = 0, resolved = 0, acknowledgements = 0,
         acknowledge_seconds = 0, resolve_seconds = 0;
  RETURN NULL;
END $$;

-- Writers wait here (not halfway through) while the triggers go in and the
-- rollups are filled from the history, so nothing committed in between is
-- missed or counted twice. One order for all three, the order the intake
-- writes them in.
LOCK TABLE incidents, alerts, incident_alerts IN SHARE ROW EXCLUSIVE MODE;

CREATE TRIGGER stats_links_inserted AFTER INSERT ON incident_alerts
  REFERENCING NEW TABLE AS new_links FOR EACH STATEMENT EXECUTE FUNCTION stats_count_links();
CREATE TRIGGER stats_links_deleted AFTER DELETE ON incident_alerts
  REFERENCING OLD TABLE AS old_links FOR EACH STATEMENT EXECUTE FUNCTION stats_count_links();
CREATE TRIGGER stats_link_moved AFTER UPDATE ON incident_alerts FOR EACH ROW
  WHEN (OLD.occurrence_starts_at IS DISTINCT FROM NEW.occurrence_starts_at OR OLD.alert_id IS DISTINCT FROM NEW.alert_id)
  EXECUTE FUNCTION stats_move_link();
CREATE TRIGGER stats_links_truncated AFTER TRUNCATE ON incident_alerts
  FOR EACH STATEMENT EXECUTE FUNCTION stats_forget_links();

CREATE TRIGGER stats_alerts_inserted AFTER INSERT ON alerts
  REFERENCING NEW TABLE AS new_alerts FOR EACH STATEMENT EXECUTE FUNCTION stats_count_alerts();
CREATE TRIGGER stats_alerts_deleted AFTER DELETE ON alerts
  REFERENCING OLD TABLE AS old_alerts FOR EACH STATEMENT EXECUTE FUNCTION stats_count_alerts();
CREATE TRIGGER stats_alert_renamed AFTER UPDATE OF name ON alerts FOR EACH ROW
  WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION stats_rename_alert();
CREATE TRIGGER stats_alert_deleting BEFORE DELETE ON alerts FOR EACH ROW
  EXECUTE FUNCTION stats_forget_alert_links();
CREATE TRIGGER stats_alerts_truncated AFTER TRUNCATE ON alerts
  FOR EACH STATEMENT EXECUTE FUNCTION stats_forget_alerts();

CREATE TRIGGER stats_incidents_inserted AFTER INSERT ON incidents
  REFERENCING NEW TABLE AS new_incidents FOR EACH STATEMENT EXECUTE FUNCTION stats_count_incidents();
CREATE TRIGGER stats_incidents_deleted AFTER DELETE ON incidents
  REFERENCING OLD TABLE AS old_incidents FOR EACH STATEMENT EXECUTE FUNCTION stats_count_incidents();
CREATE TRIGGER stats_incident_moved AFTER UPDATE ON incidents FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status
        OR OLD.triggered_at IS DISTINCT FROM NEW.triggered_at
        OR OLD.acknowledged_at IS DISTINCT FROM NEW.acknowledged_at
        OR OLD.resolved_at IS DISTINCT FROM NEW.resolved_at)
  EXECUTE FUNCTION stats_move_incident();
CREATE TRIGGER stats_incidents_truncated AFTER TRUNCATE ON incidents
  FOR EACH STATEMENT EXECUTE FUNCTION stats_forget_incidents();

-- Installations upgrading with history: the rollups start from what is stored.
INSERT INTO stats_occurrences_by_name (name, occurrences)
SELECT a.name, count(*) FROM incident_alerts ia JOIN alerts a ON a.id = ia.alert_id GROUP BY a.name;

INSERT INTO stats_occurrences_by_quarter (quarter, occurrences)
SELECT stats_quarter(occurrence_starts_at), count(*) FROM incident_alerts
 WHERE isfinite(occurrence_starts_at) GROUP BY 1;

INSERT INTO stats_totals (alerts, incidents, triggered, acknowledged, resolved, acknowledgements,
                          acknowledge_seconds, resolve_seconds)
SELECT (SELECT count(*) FROM alerts), coalesce(sum(c.sign), 0),
       coalesce(sum(c.sign) FILTER (WHERE c.status = 'triggered'), 0),
       coalesce(sum(c.sign) FILTER (WHERE c.status = 'acknowledged'), 0),
       coalesce(sum(c.sign) FILTER (WHERE c.status = 'resolved'), 0),
       coalesce(sum(c.sign) FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
       coalesce(sum(c.sign * extract(epoch FROM c.acknowledged_at - c.triggered_at))
                FILTER (WHERE c.acknowledged_at IS NOT NULL), 0),
       coalesce(sum(c.sign * extract(epoch FROM c.resolved_at - c.triggered_at))
                FILTER (WHERE c.status = 'resolved'), 0)
  FROM (SELECT 1 AS sign, status, triggered_at, acknowledged_at, resolved_at FROM incidents) c;
