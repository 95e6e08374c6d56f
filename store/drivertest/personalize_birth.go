package drivertest

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"hrsync/store"
)

// birthFields is a personalization's derived fields as the platform returns
// them, birth group included.
const birthFields = `{"name":{"initials":"AT"},"work":{"department":"Eng"},"anniversary":{"ordinal":"3rd"},` +
	`"birth":{"year":1987,"month":4,"zodiac":"Aries","years":38}}`

// TestPersonalizeNoBirth: nothing derived from a birth date stays in the
// state. Migration 5 clears the birth group of the rows an older version
// stored and updates the view; SavePersonalization drops it; the database
// refuses a row that holds it (a trigger on SQLite, a check on PostgreSQL).
func testPersonalizeNoBirth(t *testing.T, d Backend) {
	eachBackend(t, d, func(t *testing.T, b backend) {
		raw := migratedTo(t, b, 4)
		insert := `INSERT INTO personalizations (tenant, external_id, collection_id, fingerprint, state, sha, fields,
			first_requested_at, updated_at) VALUES ('acme', $1, 'c1', 1, 'done', 'sha', $2, '2025-01-01 00:00:00', '2025-01-01 00:00:00')`
		if _, err := raw.ExecContext(ctx(t), insert, "old", birthFields); err != nil {
			t.Fatalf("insert at version 4: %v", err)
		}

		s := b.open(t) // migrates to the latest version
		rows, err := s.Personalizations(ctx(t), "acme")
		must(t, err)
		old := rows[store.PersonalizationKey{ExternalID: "old", CollectionID: "c1"}]
		assertNoBirth(t, "the row stored before the migration", old.Fields)
		if !strings.Contains(string(old.Fields), "AT") || old.Sha != "sha" {
			t.Errorf("the migration lost what is kept: %s, sha %q", old.Fields, old.Sha)
		}

		must(t, s.SavePersonalization(ctx(t), store.Personalization{Tenant: "acme", ExternalID: "new", CollectionID: "c1",
			State: store.PersonalizationDone, Sha: "sha2", Fields: json.RawMessage(birthFields)}))
		rows, err = s.Personalizations(ctx(t), "acme")
		must(t, err)
		assertNoBirth(t, "a row saved now", rows[store.PersonalizationKey{ExternalID: "new", CollectionID: "c1"}].Fields)

		if _, err := raw.ExecContext(ctx(t), insert, "raw", birthFields); err == nil {
			t.Error("the database took a row with the birth group")
		}
		if _, err := raw.ExecContext(ctx(t), `UPDATE personalizations SET fields = $1 WHERE external_id = 'old'`, birthFields); err == nil {
			t.Error("the database took an update adding the birth group")
		}
		var n int
		must(t, raw.QueryRowContext(ctx(t), `SELECT COUNT(*) FROM personalization_report WHERE initials = 'AT'`).Scan(&n))
		if n != 2 {
			t.Errorf("personalization_report: %d rows with their initials, want 2", n)
		}
		var fields string
		must(t, raw.QueryRowContext(ctx(t), `SELECT fields FROM personalization_report WHERE external_id = 'old'`).Scan(&fields))
		assertNoBirth(t, "the view", json.RawMessage(fields))
	})
}

// migratedTo migrates the backend's empty database up to version, as an
// older hrsync would have left it, with the dialect's own migrations, and
// returns a plain handle on it.
func migratedTo(t *testing.T, b backend, version int64) *sql.DB {
	t.Helper()
	conn, err := b.d.Driver.Open(ctx(t), b.dsn, store.Options{Schema: b.schema})
	must(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	fsys, dialect, _, err := conn.Migrations()
	must(t, err)
	p, err := goose.NewProvider(dialect, conn.Writer().DB, fsys, goose.WithDisableGlobalRegistry(true))
	must(t, err)
	if _, err := p.UpTo(ctx(t), version); err != nil {
		t.Fatalf("migrate to %d: %v", version, err)
	}
	return b.raw(t)
}

func assertNoBirth(t *testing.T, what string, fields json.RawMessage) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(fields, &obj); err != nil {
		t.Fatalf("%s: fields %q: %v", what, fields, err)
	}
	if _, ok := obj["birth"]; ok || strings.Contains(string(fields), "Aries") || strings.Contains(string(fields), "1987") {
		t.Errorf("%s keeps what the birth date gives: %s", what, fields)
	}
}
