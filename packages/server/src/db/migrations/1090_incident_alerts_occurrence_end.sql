-- What an incident keeps of its alert's occurrence once the alert has moved
-- on. An alert is one row per fingerprint holding its current occurrence;
-- when it fires again (a new startsAt, or the same one Prometheus sent
-- again after Alertmanager resolved it: `revived`), the row takes the new
-- occurrence, and the incidents the old one belonged to listed the alert
-- as it is now: firing, since the new start, with today's annotations, on
-- the page of yesterday's resolved incident.
--
-- Written on that path only (services/intake.ts, upsertAlerts: a new or
-- revived occurrence; repositories/alerts.ts, updateAlertState), in the
-- statement that replaces the row, on the links of the occurrence it
-- replaces (found by incident_alerts_alert_occurrence, migration 1050) that
-- have nothing recorded yet:
-- - occurrence_ends_at: when it ended: the row's ends_at if it was resolved
--   (by Alertmanager or presumed by expiry), else when a notification last
--   carried it; the new occurrence's start if it was still firing. Never
--   NULL on a link the alert moved on from, so it also says "moved on".
-- - occurrence_annotations, occurrence_resolution_source: the row's, then
--   (annotations may differ between occurrences; labels are the
--   fingerprint's, the same in every occurrence).
-- A link the alert joins again in the same incident (linkAlerts' ON
-- CONFLICT: it resolved and fired again while the incident stayed open)
-- names the new occurrence and has these cleared.
--
-- Read by the incident's alert lists (repositories/alerts.ts,
-- listAlertsOfIncident and alertsOfIncidentJsonParts): a link with an end
-- recorded, or whose occurrence started before the alert's current one
-- (moved on before this migration, nothing recorded), shows the alert
-- resolved, with the link's start and whatever was recorded: for those
-- older links the end is unknown (omitted), the annotations are the
-- alert's current ones and the resolution source is omitted.
--
-- Nullable without a default: added without rewriting or scanning the
-- table, and a NULL costs nothing in the row (its null bitmap fits the
-- header's padding). The statistics' link trigger fires on changes of
-- occurrence_starts_at only (migration 0800), not on these.
ALTER TABLE incident_alerts
  ADD COLUMN occurrence_ends_at timestamptz,
  ADD COLUMN occurrence_annotations jsonb,
  ADD COLUMN occurrence_resolution_source text;
