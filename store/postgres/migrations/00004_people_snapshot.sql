-- The people state's version and its snapshot, PostgreSQL dialect. Keep this
-- file and ../sqlite/00004_people_snapshot.sql in step; every table and column
-- is described with COMMENT ON.
--
-- The people sync diffs every export against a compact index of the tenant's
-- people (sync/people). Building it means scanning every person, so the index
-- is kept here as a snapshot, valid only for the exact version of the state it
-- was built from. Triggers on people bump the tenant's version on every write
-- that changes what the index holds, whatever wrote it (hrsync, or an
-- operator's SQL), so a snapshot can never outlive the rows it describes.

-- +goose Up

CREATE TABLE people_versions (
    tenant  text PRIMARY KEY,
    version bigint NOT NULL
);
COMMENT ON TABLE people_versions IS 'Per tenant, a counter that triggers on people bump on every write that changes the people as the people sync''s index sees them. A tenant with no row is at version 0.';
COMMENT ON COLUMN people_versions.tenant IS 'Tenant (company).';
COMMENT ON COLUMN people_versions.version IS 'The current version of the tenant''s people.';

CREATE TABLE people_snapshots (
    tenant  text NOT NULL,
    part    integer NOT NULL,
    version bigint NOT NULL,
    data    bytea NOT NULL,
    PRIMARY KEY (tenant, part)
);
-- The parts are written once per change of state and read whole: no need to
-- compress them again (the format is hashes, which do not compress).
ALTER TABLE people_snapshots ALTER COLUMN data SET STORAGE EXTERNAL;
COMMENT ON TABLE people_snapshots IS 'The people sync''s index of a tenant''s people, in parts of a few MiB, valid only while its version equals people_versions.version. hrsync rewrites it; nothing else should.';
COMMENT ON COLUMN people_snapshots.tenant IS 'Tenant (company).';
COMMENT ON COLUMN people_snapshots.part IS '0-based position of the part.';
COMMENT ON COLUMN people_snapshots.version IS 'The state version the snapshot was built from (the same for every part of a tenant).';
COMMENT ON COLUMN people_snapshots.data IS 'The part''s bytes, in a binary format of hrsync''s people sync.';

-- Statement-level triggers with transition tables: one bump per statement
-- and tenant, however many rows it writes (a row-level trigger would update
-- the tenant's version row once per person). The functions keep the
-- search_path they were created with, so an operator's SQL that names the
-- schema (UPDATE hrsync.people ...) finds people_versions as well.
-- +goose StatementBegin
CREATE FUNCTION people_version_bump_new() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO people_versions (tenant, version)
        SELECT DISTINCT tenant, 1 FROM people_new
        ON CONFLICT (tenant) DO UPDATE SET version = people_versions.version + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION people_version_bump_old() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO people_versions (tenant, version)
        SELECT DISTINCT tenant, 1 FROM people_old
        ON CONFLICT (tenant) DO UPDATE SET version = people_versions.version + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- An update bumps the tenants of the rows whose columns read by
-- store.ScanPeopleKeys changed: the rows of one side that the other side does
-- not have, compared on those columns only. An update of last_seen_at alone,
-- or one that writes the same values again, bumps nothing. (A trigger with
-- transition tables cannot be limited to a column list: it compares.)
-- +goose StatementBegin
CREATE FUNCTION people_version_bump_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO people_versions (tenant, version)
        SELECT DISTINCT tenant, 1 FROM (
            (SELECT tenant, external_id, email, fingerprint, departed_at, created_on_platform_at FROM people_new
             EXCEPT
             SELECT tenant, external_id, email, fingerprint, departed_at, created_on_platform_at FROM people_old)
            UNION ALL
            (SELECT tenant, external_id, email, fingerprint, departed_at, created_on_platform_at FROM people_old
             EXCEPT
             SELECT tenant, external_id, email, fingerprint, departed_at, created_on_platform_at FROM people_new)
        ) AS changed
        ON CONFLICT (tenant) DO UPDATE SET version = people_versions.version + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER people_version_insert AFTER INSERT ON people
    REFERENCING NEW TABLE AS people_new
    FOR EACH STATEMENT EXECUTE FUNCTION people_version_bump_new();
CREATE TRIGGER people_version_delete AFTER DELETE ON people
    REFERENCING OLD TABLE AS people_old
    FOR EACH STATEMENT EXECUTE FUNCTION people_version_bump_old();
CREATE TRIGGER people_version_update AFTER UPDATE ON people
    REFERENCING OLD TABLE AS people_old NEW TABLE AS people_new
    FOR EACH STATEMENT EXECUTE FUNCTION people_version_bump_changed();

-- TRUNCATE fires no DELETE trigger and names no tenant: it drops every
-- snapshot. So does the loss of a tenant's version row (which would restart
-- its count at 0, where an old snapshot could match again).
-- +goose StatementBegin
CREATE FUNCTION people_snapshots_drop_all() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM people_snapshots;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION people_snapshots_drop_gone() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM people_snapshots WHERE tenant IN (SELECT tenant FROM people_versions_gone);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER people_version_truncate AFTER TRUNCATE ON people
    FOR EACH STATEMENT EXECUTE FUNCTION people_snapshots_drop_all();
CREATE TRIGGER people_versions_truncate AFTER TRUNCATE ON people_versions
    FOR EACH STATEMENT EXECUTE FUNCTION people_snapshots_drop_all();
CREATE TRIGGER people_versions_delete AFTER DELETE ON people_versions
    REFERENCING OLD TABLE AS people_versions_gone
    FOR EACH STATEMENT EXECUTE FUNCTION people_snapshots_drop_gone();

-- +goose Down
DROP TRIGGER people_versions_delete ON people_versions;
DROP TRIGGER people_versions_truncate ON people_versions;
DROP TRIGGER people_version_truncate ON people;
DROP FUNCTION people_snapshots_drop_gone();
DROP FUNCTION people_snapshots_drop_all();
DROP TRIGGER people_version_update ON people;
DROP TRIGGER people_version_delete ON people;
DROP TRIGGER people_version_insert ON people;
DROP FUNCTION people_version_bump_changed();
DROP FUNCTION people_version_bump_old();
DROP FUNCTION people_version_bump_new();
DROP TABLE people_snapshots;
DROP TABLE people_versions;
