-- The right-hand side of calendar events' UIDs, one per installation: RFC
-- 5545 wants a UID unique everywhere, and the feeds of two terdut servers
-- (staging and production) subscribed in one calendar app shared every UID
-- ("…@terdut"), so an app could take one server's shift for the other's.
-- Not a secret; kept with the instance's other generated values.
INSERT INTO instance_secrets (name, secret)
VALUES ('calendar_uid_domain', replace(gen_random_uuid()::text, '-', ''));
