-- safeguard_stops: every export (by content hash) a safeguard stopped, so
-- that an HR admin can approve it from the drop folder's approve/ and the
-- next run takes it past the safeguards once. Keep this file and
-- ../sqlite/00015_safeguard_approval.sql in step.

-- +goose Up
CREATE TABLE safeguard_stops (
    tenant       text NOT NULL,
    sha256       text NOT NULL,
    run_id       text NOT NULL REFERENCES runs (id),
    stopped_at   timestamptz NOT NULL,
    stops        text NOT NULL,
    approved_run text REFERENCES runs (id),
    approved_at  timestamptz,
    approved_by  text NOT NULL DEFAULT '',
    PRIMARY KEY (tenant, sha256)
);
COMMENT ON TABLE safeguard_stops IS 'Every export (by content hash) a safeguard stopped, so that an HR admin can approve it once from the drop folder''s approve/.';
COMMENT ON COLUMN safeguard_stops.tenant IS 'Tenant the export was dropped for.';
COMMENT ON COLUMN safeguard_stops.sha256 IS 'Hex SHA-256 of the export''s bytes.';
COMMENT ON COLUMN safeguard_stops.run_id IS 'The run a safeguard stopped.';
COMMENT ON COLUMN safeguard_stops.stopped_at IS 'When the stop was committed.';
COMMENT ON COLUMN safeguard_stops.stops IS 'JSON list of the safeguards that stopped it, in plain words.';
COMMENT ON COLUMN safeguard_stops.approved_run IS 'The run that took the approved export past the safeguards; NULL until approved.';
COMMENT ON COLUMN safeguard_stops.approved_at IS 'When that run committed; NULL until approved.';
COMMENT ON COLUMN safeguard_stops.approved_by IS 'Who placed the export in approve/, where the backend knows (file owner, SFTP or S3 user); empty when not.';

-- +goose Down
DROP TABLE safeguard_stops;
