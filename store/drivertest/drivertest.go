// Package drivertest is the test suite every store dialect passes: Run runs
// each test of hrsync/store against stores opened through one dialect's
// driver, described by a Backend. A dialect package runs it from a small
// _test.go of its own (see store/sqlite and store/postgres), so that a new
// dialect is proven by the very tests the shipped ones pass. The benchmarks
// (BenchPeople, BenchPeopleVersionTriggers) run the same way.
//
// The suite speaks only through the store's API and plain database/sql
// handles on the dialect's tables; what differs by dialect (where a fresh
// database lives, the placeholders of raw SQL, what "no state" looks like)
// comes from the Backend.
package drivertest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"hrsync/store"
)

// Target is one fresh database of a dialect, made for one test: the DSN and
// options that open it.
type Target struct {
	// DSN opens the target with store.Open.
	DSN string
	// Schema is the target's schema, on a dialect with schemas.
	Schema string
}

// Backend describes a dialect to the suite.
type Backend struct {
	// Name names the dialect in subtests.
	Name string
	// Driver is the dialect's driver, registered for the targets' DSNs.
	Driver store.Driver
	// Bind is the sqlx bind type of the Raw handles' placeholders
	// (sqlx.QUESTION, sqlx.DOLLAR, ...).
	Bind int
	// New makes a target for one test: a database that does not hold
	// hrsync's state yet, removed when the test ends.
	New func(t testing.TB) Target
	// Raw opens a plain database/sql handle on the target's tables,
	// closed when the test ends.
	Raw func(t testing.TB, tg Target) *sql.DB
	// Where is what a *store.NoStateError says of the target.
	Where func(tg Target) string
	// Untouched tells whether the target is still as New left it: a
	// read-only open must create nothing.
	Untouched func(t testing.TB, tg Target) bool
	// MakeEmpty makes the target exist without hrsync's tables (an empty
	// file, an empty schema) and returns a function that checks that it
	// was left as made and removes it again.
	MakeEmpty func(t testing.TB, tg Target) (checkAndUndo func(t testing.TB))
	// DropTrigger renders the statement that drops a trigger of table.
	DropTrigger func(trigger, table string) string
	// Plain, when not nil, opens a handle on the same database outside
	// the target's schema (a dialect with schemas).
	Plain func(t testing.TB) *sql.DB
	// Truncate tells that the dialect has TRUNCATE ... CASCADE.
	Truncate bool
}

// Run runs the whole suite on the dialect b describes, each test in a
// parallel subtest.
func Run(t *testing.T, b Backend) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"BacklogPersonalizations", testBacklogPersonalizations},
		{"LastSuccessesAndHeldGrants", testLastSuccessesAndHeldGrants},
		{"GrantDays", testGrantDays},
		{"BirthdaysKeepNoYear", testBirthdaysKeepNoYear},
		{"BirthdaysForgotten", testBirthdaysForgotten},
		{"VoidReason", testVoidReason},
		{"RuleGrantsTotalByDay", testRuleGrantsTotalByDay},
		{"RuleGrantsTotal", testRuleGrantsTotal},
		{"Batches", testBatches},
		{"HoldInterrupted", testHoldInterrupted},
		{"GrantTransitions", testGrantTransitions},
		{"UnknownBatchesAndResend", testUnknownBatchesAndResend},
		{"UnaccountedPeopleAreHeld", testUnaccountedPeopleAreHeld},
		{"CloseInterrupted", testCloseInterrupted},
		{"TryLock", testTryLock},
		{"Migrate", testMigrate},
		{"Orders", testOrders},
		{"OrdersIngestSplit", testOrdersIngestSplit},
		{"People", testPeople},
		{"ScanPeopleKeys", testScanPeopleKeys},
		{"ScanPeopleKeysParts", testScanPeopleKeysParts},
		{"PeopleVersion", testPeopleVersion},
		{"PeopleSnapshot", testPeopleSnapshot},
		{"Personalizations", testPersonalizations},
		{"PersonalizationReportView", testPersonalizationReportView},
		{"RefusedCollections", testRefusedCollections},
		{"LastProcessedFile", testLastProcessedFile},
		{"PersonalizeNoBirth", testPersonalizeNoBirth},
		{"OpenReadOnly", testOpenReadOnly},
		{"OpenEmpty", testOpenEmpty},
		{"ReportingQueries", testReportingQueries},
		{"Runs", testRuns},
		{"LastGoodImport", testLastGoodImport},
		{"AmendRun", testAmendRun},
		{"SetRunReports", testSetRunReports},
		{"RunCycle", testRunCycle},
		{"LateArchive", testLateArchive},
		{"SafeguardStopApprovedOnce", testSafeguardStopApprovedOnce},
		{"ScopeKeepsJobsApart", testScopeKeepsJobsApart},
		{"GrantScopeMigration", testGrantScopeMigration},
		{"ClaimTick", testClaimTick},
		{"SCIMDirectory", testSCIMDirectory},
		{"SCIMAuditAndRefusals", testSCIMAuditAndRefusals},
		{"SCIMUsersFeed", testSCIMUsersFeed},
		{"SCIMConcurrentUpdates", testSCIMConcurrentUpdates},
		{"SCIMFeedAsSource", testSCIMFeedAsSource},
		{"SCIMBirthdayMigration", testSCIMBirthdayMigration},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, b)
		})
	}
}

// backend is one target of a dialect, as a test uses it: open returns a new
// Store on the same database (and schema) each time it is called, so that
// tests can hold two Store values at once, as two processes would.
type backend struct {
	d Backend
	// dsn and schema name the database, for opening it in other ways.
	dsn, schema string
	tg          Target
}

func newBackend(t testing.TB, d Backend) backend {
	t.Helper()
	tg := d.New(t)
	return backend{d: d, dsn: tg.DSN, schema: tg.Schema, tg: tg}
}

// open opens and migrates the target.
func (b backend) open(t testing.TB) *store.Store {
	t.Helper()
	return Open(t, b.dsn, store.Options{Schema: b.schema, Migrate: true})
}

// raw is a plain database/sql handle on the same tables, for baselines.
func (b backend) raw(t testing.TB) *sql.DB {
	t.Helper()
	return b.d.Raw(t, b.tg)
}

// q writes a query's "?" placeholders as the raw handle wants them.
func (b backend) q(query string) string { return sqlx.Rebind(b.d.Bind, query) }

// Open opens the store at dsn for a test, failing the test when it cannot,
// and closes it when the test ends.
func Open(t testing.TB, dsn string, opts store.Options) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// eachBackend runs fn on a fresh target of the dialect, in a subtest named
// after it.
func eachBackend(t *testing.T, d Backend, fn func(t *testing.T, b backend)) {
	t.Helper()
	t.Run(d.Name, func(t *testing.T) {
		fn(t, newBackend(t, d))
	})
}

// eachStore runs fn on a fresh, migrated store of the dialect.
func eachStore(t *testing.T, d Backend, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	eachBackend(t, d, func(t *testing.T, b backend) { fn(t, b.open(t)) })
}

// ctx is the context of a test: cancelled when the test ends.
func ctx(t testing.TB) context.Context { return t.Context() }

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantErr fails the test unless err matches target.
func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

// at is a fixed instant in tests, with microseconds (every dialect keeps
// them).
func at(day, sec int) time.Time {
	return time.Date(2025, 3, day, 9, 30, sec, 123456000, time.UTC)
}
