-- The SCIM directory: the users an identity provider pushed to a tenant over
-- SCIM 2.0, and the audit trail of every change (sources/scim). SQLite
-- dialect; keep this file and ../postgres/00010_scim.sql in step.
--
-- The directory is the tenant's source, as an export in the drop folder is:
-- it keeps what the identity provider sent (the hrsync extension's birthDate
-- included, so that a GET returns what was written) until the user is
-- deleted. The audit trail keeps personal data only as tenant-keyed hashes.

-- +goose Up

-- scim_tenants: per tenant, the last change sequence given out. Every write
-- that changes a user takes the next one (and, on PostgreSQL, the row's
-- lock), so sequences commit in order: a reader that saw N never later sees
-- a change numbered below N appear.
CREATE TABLE scim_tenants (
    tenant TEXT PRIMARY KEY,            -- tenant (company) whose directory it is
    seq    INTEGER NOT NULL             -- the last change sequence given out
);

-- scim_users: one row per user a tenant's identity provider created; a
-- deleted user stays as a tombstone (deleted_at set) so that the people job
-- reads the deletion as a departure.
CREATE TABLE scim_users (
    tenant        TEXT NOT NULL,        -- tenant (company)
    id            TEXT NOT NULL,        -- the SCIM id hrsync gave the user (UUID)
    user_name     TEXT NOT NULL,        -- userName as sent
    user_name_key TEXT NOT NULL,        -- userName lower-cased: the key of uniqueness and of filters
    external_id   TEXT,                 -- the identity provider's externalId; NULL when not sent
    active        INTEGER NOT NULL      -- 1 when active, 0 when deactivated
                  CHECK (active IN (0, 1)),
    attrs         TEXT NOT NULL,        -- JSON object of the user's other attributes (names, e-mails, extensions)
    version       INTEGER NOT NULL,     -- 1 at creation, one more per change (the ETag)
    created_at    TIMESTAMP NOT NULL,   -- when it was created
    modified_at   TIMESTAMP NOT NULL,   -- when it last changed
    deleted_at    TIMESTAMP,            -- when it was deleted; NULL while it exists
    created_seq   INTEGER NOT NULL,     -- the change sequence of its creation (the order of lists)
    change_seq    INTEGER NOT NULL,     -- the change sequence of its last change (deletion included)
    PRIMARY KEY (tenant, id)
);
CREATE UNIQUE INDEX scim_users_user_name ON scim_users (tenant, user_name_key) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX scim_users_external_id ON scim_users (tenant, external_id)
    WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE INDEX scim_users_created ON scim_users (tenant, created_seq);
CREATE INDEX scim_users_changed ON scim_users (tenant, change_seq);

-- scim_audit: one row per change of a tenant's directory, written in the
-- transaction of the change.
CREATE TABLE scim_audit (
    tenant      TEXT NOT NULL,          -- tenant (company)
    seq         INTEGER NOT NULL,       -- the change sequence of the change
    actor       TEXT NOT NULL,          -- who wrote: the tenant's token name, never a person
    at          TIMESTAMP NOT NULL,     -- when
    action      TEXT NOT NULL           -- what kind of write
                CHECK (action IN ('create', 'replace', 'patch', 'delete')),
    user_id     TEXT NOT NULL,          -- the SCIM id of the user
    external_id TEXT NOT NULL,          -- the user's externalId ('' when none)
    version     INTEGER NOT NULL,       -- the user's version after the change (0 after a delete)
    changes     TEXT NOT NULL,          -- JSON array of {attr, old, new}; personal data as "sha256:" hashes
    PRIMARY KEY (tenant, seq)
);

-- +goose Down
DROP TABLE scim_audit;
DROP TABLE scim_users;
DROP TABLE scim_tenants;
