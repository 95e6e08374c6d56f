-- safeguard_stops: every export (by content hash) a safeguard stopped, so
-- that an HR admin can approve it from the drop folder's approve/ and the
-- next run takes it past the safeguards once. Keep this file and
-- ../postgres/00015_safeguard_approval.sql in step.

-- +goose Up
CREATE TABLE safeguard_stops (
    tenant         TEXT NOT NULL,       -- tenant the export was dropped for
    sha256         TEXT NOT NULL,       -- hex SHA-256 of the export's bytes
    run_id         TEXT NOT NULL REFERENCES runs (id), -- the run a safeguard stopped
    stopped_at     TIMESTAMP NOT NULL,  -- when the stop was committed
    stops          TEXT NOT NULL,       -- JSON list of the safeguards that stopped it, in plain words
    approved_run   TEXT REFERENCES runs (id), -- the run that took it past the safeguards; NULL until approved
    approved_at    TIMESTAMP,           -- when that run committed; NULL until approved
    approved_by    TEXT NOT NULL DEFAULT '', -- who placed it in approve/, where the backend knows
    PRIMARY KEY (tenant, sha256)
);

-- +goose Down
DROP TABLE safeguard_stops;
