-- Usernames are unique regardless of case: "ADMIN" next to "admin" is one
-- person impersonating another in every timeline and audit line. Refuses to
-- apply (and the server to start) while live users collide, naming them, so
-- whoever runs the server decides which one to rename or delete.
DO $$
DECLARE
  collisions text;
BEGIN
  SELECT string_agg(names, '; ') INTO collisions
    FROM (SELECT string_agg(username, ', ' ORDER BY id) AS names
            FROM users WHERE deleted_at IS NULL
           GROUP BY lower(username) HAVING count(*) > 1) AS groups;
  IF collisions IS NOT NULL THEN
    RAISE EXCEPTION 'usernames must be unique regardless of case, but these live users collide: %. Rename or delete all but one of each (e.g. DELETE /api/users/{id} on an older server version, or UPDATE users SET username = ... in SQL), then start the server again', collisions;
  END IF;
END
$$;

CREATE UNIQUE INDEX users_username_live_ci ON users (lower(username)) WHERE deleted_at IS NULL;
