-- The people state's version and its snapshot, SQLite dialect. Keep this file
-- and ../postgres/00004_people_snapshot.sql in step.
--
-- The people sync diffs every export against a compact index of the tenant's
-- people (sync/people). Building it means scanning every person, so the index
-- is kept here as a snapshot, valid only for the exact version of the state it
-- was built from. Triggers on people bump the tenant's version on every write
-- that changes what the index holds, whatever wrote it (hrsync, or an
-- operator's SQL), so a snapshot can never outlive the rows it describes.

-- +goose Up

-- people_versions: per tenant, a counter bumped by the triggers below. A
-- tenant with no row is at version 0.
CREATE TABLE people_versions (
    tenant  TEXT PRIMARY KEY,            -- tenant (company)
    version INTEGER NOT NULL             -- bumped by every write that changes the tenant's people as the index sees them
);

-- people_snapshots: the tenant's index of people, in parts of a few MiB, as
-- built from the state at `version`. Every part of a tenant carries the same
-- version; the snapshot is used only while it equals people_versions.version.
CREATE TABLE people_snapshots (
    tenant  TEXT NOT NULL,               -- tenant (company)
    part    INTEGER NOT NULL,            -- 0-based position of the part
    version INTEGER NOT NULL,            -- the state version the snapshot was built from
    data    BLOB NOT NULL,               -- the part's bytes (a binary format of sync/people)
    PRIMARY KEY (tenant, part)
);

-- Row-level triggers (SQLite has no statement-level ones). The columns are
-- the ones store.ScanPeopleKeys reads; an update of any other column (such as
-- last_seen_at), or one that writes the same values again, bumps nothing.
-- +goose StatementBegin
CREATE TRIGGER people_version_insert AFTER INSERT ON people
BEGIN
    INSERT INTO people_versions (tenant, version) VALUES (NEW.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER people_version_delete AFTER DELETE ON people
BEGIN
    INSERT INTO people_versions (tenant, version) VALUES (OLD.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER people_version_update
AFTER UPDATE OF tenant, external_id, email, fingerprint, departed_at, created_on_platform_at ON people
WHEN OLD.tenant IS NOT NEW.tenant OR OLD.external_id IS NOT NEW.external_id OR OLD.email IS NOT NEW.email
    OR OLD.fingerprint IS NOT NEW.fingerprint OR OLD.departed_at IS NOT NEW.departed_at
    OR OLD.created_on_platform_at IS NOT NEW.created_on_platform_at
BEGIN
    INSERT INTO people_versions (tenant, version) VALUES (NEW.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET version = version + 1;
    -- A person moved to another tenant changes both tenants.
    INSERT INTO people_versions (tenant, version) SELECT OLD.tenant, 1 WHERE OLD.tenant IS NOT NEW.tenant
        ON CONFLICT (tenant) DO UPDATE SET version = version + 1;
END;
-- +goose StatementEnd

-- The loss of a tenant's version row would restart its count at 0, where an
-- old snapshot could match again: its snapshot goes with it.
-- +goose StatementBegin
CREATE TRIGGER people_versions_delete AFTER DELETE ON people_versions
BEGIN
    DELETE FROM people_snapshots WHERE tenant = OLD.tenant;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER people_versions_delete;
DROP TRIGGER people_version_update;
DROP TRIGGER people_version_delete;
DROP TRIGGER people_version_insert;
DROP TABLE people_snapshots;
DROP TABLE people_versions;
