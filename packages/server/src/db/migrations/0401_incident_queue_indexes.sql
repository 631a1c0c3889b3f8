-- Indexes for the incident queue (GET /api/incidents) beyond those of 0301,
-- measured by `npm run bench:queue` on 100k incidents / 1M alerts
-- (bench/README.md has the before/after figures).

-- `?snoozed=true` is a range on snoozed_until (> now): without an index it
-- scans the whole history; with it, only the incidents snoozed right now.
CREATE INDEX incidents_snoozed ON incidents (snoozed_until) WHERE snoozed_until IS NOT NULL;
