-- The SCIM directory keeps no year of birth (DESIGN.md, invariant 5): a
-- birthDate is kept as its month and day alone, "--MM-DD", what the birthday
-- grant rules need. This rewrites the birth dates stored before, with their
-- year, in that form. SQLite dialect; keep this file and
-- ../postgres/00013_scim_birthday.sql in step.

-- +goose Up
UPDATE scim_users
   SET attrs = json_set(attrs, '$.birthDate', '--' || substr(json_extract(attrs, '$.birthDate'), 6, 5))
 WHERE json_extract(attrs, '$.birthDate') GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*';

-- +goose Down
-- The years are gone: nothing to restore.
SELECT 1;
