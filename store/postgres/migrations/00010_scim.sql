-- The SCIM directory: the users an identity provider pushed to a tenant over
-- SCIM 2.0, and the audit trail of every change (sources/scim). PostgreSQL
-- dialect; keep this file and ../sqlite/00010_scim.sql in step.
--
-- The directory is the tenant's source, as an export in the drop folder is:
-- it keeps what the identity provider sent (the hrsync extension's birthDate
-- included, so that a GET returns what was written) until the user is
-- deleted. The audit trail keeps personal data only as tenant-keyed hashes.

-- +goose Up
CREATE TABLE scim_tenants (
    tenant text PRIMARY KEY,
    seq    bigint NOT NULL
);
COMMENT ON TABLE scim_tenants IS 'Per tenant, the last SCIM change sequence given out. Every write that changes a user takes the next one under this row''s lock, so sequences commit in order.';
COMMENT ON COLUMN scim_tenants.tenant IS 'Tenant (company) whose directory it is.';
COMMENT ON COLUMN scim_tenants.seq IS 'The last change sequence given out.';

CREATE TABLE scim_users (
    tenant        text NOT NULL,
    id            text NOT NULL,
    user_name     text NOT NULL,
    user_name_key text NOT NULL,
    external_id   text,
    active        boolean NOT NULL,
    attrs         jsonb NOT NULL,
    version       bigint NOT NULL,
    created_at    timestamptz NOT NULL,
    modified_at   timestamptz NOT NULL,
    deleted_at    timestamptz,
    created_seq   bigint NOT NULL,
    change_seq    bigint NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE UNIQUE INDEX scim_users_user_name ON scim_users (tenant, user_name_key) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX scim_users_external_id ON scim_users (tenant, external_id)
    WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE INDEX scim_users_created ON scim_users (tenant, created_seq);
CREATE INDEX scim_users_changed ON scim_users (tenant, change_seq);
COMMENT ON TABLE scim_users IS 'One row per user a tenant''s identity provider created over SCIM; a deleted user stays as a tombstone (deleted_at set) so that the people job reads the deletion as a departure.';
COMMENT ON COLUMN scim_users.tenant IS 'Tenant (company).';
COMMENT ON COLUMN scim_users.id IS 'The SCIM id hrsync gave the user (UUID).';
COMMENT ON COLUMN scim_users.user_name IS 'userName as sent.';
COMMENT ON COLUMN scim_users.user_name_key IS 'userName lower-cased: the key of uniqueness and of filters.';
COMMENT ON COLUMN scim_users.external_id IS 'The identity provider''s externalId; NULL when not sent.';
COMMENT ON COLUMN scim_users.active IS 'False when the identity provider deactivated the user.';
COMMENT ON COLUMN scim_users.attrs IS 'The user''s other attributes (names, e-mails, enterprise and hrsync extensions) as a JSON object.';
COMMENT ON COLUMN scim_users.version IS '1 at creation, one more per change (the ETag).';
COMMENT ON COLUMN scim_users.created_at IS 'When the user was created.';
COMMENT ON COLUMN scim_users.modified_at IS 'When the user last changed.';
COMMENT ON COLUMN scim_users.deleted_at IS 'When the user was deleted; NULL while it exists.';
COMMENT ON COLUMN scim_users.created_seq IS 'The change sequence of the user''s creation: the order of lists.';
COMMENT ON COLUMN scim_users.change_seq IS 'The change sequence of the user''s last change (a deletion included).';

CREATE TABLE scim_audit (
    tenant      text NOT NULL,
    seq         bigint NOT NULL,
    actor       text NOT NULL,
    at          timestamptz NOT NULL,
    action      text NOT NULL CHECK (action IN ('create', 'replace', 'patch', 'delete')),
    user_id     text NOT NULL,
    external_id text NOT NULL,
    version     bigint NOT NULL,
    changes     jsonb NOT NULL,
    PRIMARY KEY (tenant, seq)
);
COMMENT ON TABLE scim_audit IS 'One row per change of a tenant''s SCIM directory, written in the transaction of the change.';
COMMENT ON COLUMN scim_audit.tenant IS 'Tenant (company).';
COMMENT ON COLUMN scim_audit.seq IS 'The change sequence of the change.';
COMMENT ON COLUMN scim_audit.actor IS 'Who wrote: the tenant''s token name, never a person.';
COMMENT ON COLUMN scim_audit.at IS 'When the change was made.';
COMMENT ON COLUMN scim_audit.action IS 'What kind of write: create, replace, patch or delete.';
COMMENT ON COLUMN scim_audit.user_id IS 'The SCIM id of the user.';
COMMENT ON COLUMN scim_audit.external_id IS 'The user''s externalId ('''' when none).';
COMMENT ON COLUMN scim_audit.version IS 'The user''s version after the change (0 after a delete).';
COMMENT ON COLUMN scim_audit.changes IS 'JSON array of {attr, old, new}; personal data only as "sha256:" hashes keyed by the tenant.';

-- +goose Down
DROP TABLE scim_audit;
DROP TABLE scim_users;
DROP TABLE scim_tenants;
