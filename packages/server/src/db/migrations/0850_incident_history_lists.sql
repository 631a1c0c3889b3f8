-- The two incident lists of history (GET /api/incidents?status=resolved and
-- ?archived=true), each in the list's own order, so a page reads `limit`
-- index entries whatever the mix of the history. Without them both walk
-- incidents_newest (0300) and filter: cheap while archived and unarchived
-- incidents alternate (the bench:queue data set: ~1,100 entries for a page of
-- 100), but the archived list of a team that rarely archives walks the whole
-- history (100k entries, and a read of each incident's row) to find a page.
CREATE INDEX incidents_resolved_newest ON incidents (triggered_at DESC, id DESC)
  WHERE status = 'resolved' AND archived_at IS NULL;
CREATE INDEX incidents_archived_newest ON incidents (triggered_at DESC, id DESC)
  WHERE archived_at IS NOT NULL;
