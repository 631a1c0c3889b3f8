-- "Last seen" out of every index (issue 15), so that moving it is a HOT
-- update: the row version stays on its page and no index gains an entry.
-- Alertmanager re-sends every firing alert of a group each repeat_interval,
-- and such a repeat only moves last_seen_at; with last_seen_at in three
-- indexes, each of those updates wrote a new entry into every index of
-- alerts, most of the PostgreSQL time of a 100-alert repeat (5.1 of 6.8 ms
-- per notification; 0.6 ms without). Any index that names the column, even
-- in a partial index's predicate, rules HOT out, so none may.
--
-- What read alerts by last_seen_at now finds its rows by other columns and
-- checks last_seen_at on the row:
-- - the staleness checks of a group, and the sweep's and the statistics'
--   firing alerts: the group's (or every) firing alert, by
--   alerts_firing_group, which holds only firing alerts;
-- - retention of resolved alerts no incident refers to: by
--   alerts_resolved_unlinked (repositories/alerts.ts says why incident_id
--   IS NULL holds for every one of them).
DROP INDEX alerts_stale_candidates;
DROP INDEX alerts_firing_group;
DROP INDEX alerts_resolved_last_seen;
CREATE INDEX alerts_firing_group ON alerts (group_key) WHERE status = 'firing';
CREATE INDEX alerts_resolved_unlinked ON alerts (id) WHERE status = 'resolved' AND incident_id IS NULL;

-- Room on each page for the new row versions of HOT updates (pages written
-- from now on; older pages make room as they are pruned).
ALTER TABLE alerts SET (fillfactor = 85);
