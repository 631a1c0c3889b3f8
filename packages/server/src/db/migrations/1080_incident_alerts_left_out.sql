-- When a notification of the incident's group last left alerts out
-- (Alertmanager's max_alerts: `truncatedAlerts` > 0) and listed none firing.
-- Alertmanager cuts the list before it computes the notification's `status`,
-- so nothing says whether an alert it left out fires: the notification does
-- not make the incident quiet, and the staleness sweep does not resolve it
-- for having no firing alert until TERDUT_ALERT_STALE_AFTER after this
-- (services/alert-expiry.ts). NULL: never. Written only on that path; read
-- by incident id, so no index.
ALTER TABLE incidents ADD COLUMN alerts_left_out_at timestamptz;
