package drivertest

import (
	"database/sql"
	"testing"

	"hrsync/model"
	"hrsync/store"
)

// Person is the suite's person number n, with the external id id: what a
// dialect's own tests save.
func Person(id string, n int) store.PersonRow { return person(id, n) }

// Welcome is a welcome grant of amount for a person of tenant.
func Welcome(tenant, ext string, amount float64) model.Grant { return welcome(tenant, ext, amount) }

// Intent is a batch of run creating the people ids, each with a welcome
// grant of 50, under the idempotency key key.
func Intent(run, tenant, key string, ids ...string) store.BatchIntent {
	return intent(run, tenant, key, ids...)
}

// DocSQL returns the SQL blocks of the section of docs/reporting.md whose
// title starts with prefix.
func DocSQL(t *testing.T, prefix string) []string {
	t.Helper()
	var out []string
	for _, q := range sqlBlocks(docSection(t, prefix)) {
		out = append(out, q.sql)
	}
	return out
}

// QueryRows runs q on db and returns its rows as text, normalized as the
// reporting tests compare them.
func QueryRows(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	return queryRows(t, db, q)
}

// ReportingTables are the tables and views analysts read.
func ReportingTables() []string { return reportingTables() }
