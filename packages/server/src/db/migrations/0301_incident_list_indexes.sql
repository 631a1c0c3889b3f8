-- Indexes for large histories (bench:queue fills 100k incidents, 1M alerts):
-- the default incident list reads only open, unarchived incidents, newest
-- first; the retention prune looks for old resolved alerts.
CREATE INDEX incidents_open_newest ON incidents (triggered_at DESC, id DESC)
  WHERE status <> 'resolved' AND archived_at IS NULL;
CREATE INDEX alerts_resolved_last_seen ON alerts (last_seen_at) WHERE status = 'resolved';
CREATE INDEX alerts_firing_group ON alerts (group_key, last_seen_at) WHERE status = 'firing';
