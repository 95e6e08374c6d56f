-- The SCIM directory keeps no year of birth (DESIGN.md, invariant 5): a
-- birthDate is kept as its month and day alone, "--MM-DD", what the birthday
-- grant rules need. This rewrites the birth dates stored before, with their
-- year, in that form. PostgreSQL dialect; keep this file and
-- ../sqlite/00013_scim_birthday.sql in step.

-- +goose Up
UPDATE scim_users
   SET attrs = jsonb_set(attrs, '{birthDate}', to_jsonb('--' || substr(attrs->>'birthDate', 6, 5)))
 WHERE attrs->>'birthDate' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}';
COMMENT ON COLUMN scim_users.attrs IS 'The user''s other attributes (names, e-mails, enterprise and hrsync extensions) as a JSON object; birthDate as its month and day alone (--MM-DD).';

-- +goose Down
-- The years are gone: nothing to restore.
SELECT 1;
