-- The links trigger of migrations 0800 and 0960 with its plan made once per
-- connection again, and made so that it cannot go bad as alerts grows.
--
-- Migration 0960 planned its statement anew on every call (EXECUTE),
-- because a plan kept from a connection's first call, made while alerts was
-- small, joined by scanning the whole table for every link. Planning it
-- cost 0.6-0.8 ms of every notification that adds a link (a quarter of
-- PostgreSQL's time for a new group's 1-alert notification; auto_explain,
-- bench/README.md, "The links trigger, planned once"), and is what only
-- this function's planner settings need to rule out: with scans of whole
-- tables, hash and merge joins off for this function alone, the only plan
-- left is the one that is right at any size, each link looking up its
-- alert by primary key. The links' own transition table is read whole
-- either way. The same statements otherwise.
CREATE OR REPLACE FUNCTION stats_count_links() RETURNS trigger LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
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
