package runner_test

// The three recipes of docs/architecture.md together: a test-only store
// dialect ("roomsdb:"), a test-only source kind ("fixed", from
// sources/registry/registrytest) and a test-only
// job ("roster") each plug in with one registration, are configured by the
// config package through the registries (config.Parse with registry.Kinds
// and store.Dialects), and run through the runner's RunOnce, which records
// the job's run in the state the new dialect keeps.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/registry"
	_ "hrsync/sources/registry/registrytest" // registers the test-only fixed kind
	"hrsync/store"
	"hrsync/store/sqlite"
)

// The dialect's and the job's registrations, one line each (in real code,
// each in its own package's init); the source kind registers itself in
// sources/registry/registrytest, imported below.
func init() {
	store.Register(roomsDriver{}, "roomsdb")
	runner.RegisterKind(runner.Kind{Job: jobRoster, Order: 80, Short: "Count a roster's people (test only)",
		Schedule: func(config.Tenant) string { return "" }, Cycle: rosterCycle})
}

// roomsDriver is the test-only dialect: SQLite under the "roomsdb:" scheme
// and another name, describing its URLs to the configuration as SQLite does.
type roomsDriver struct{}

func asSQLite(dsn string) string { return "sqlite:" + strings.TrimPrefix(dsn, "roomsdb:") }

func (roomsDriver) Name() string { return "roomsdb" }
func (roomsDriver) Open(ctx context.Context, dsn string, opts store.Options) (store.Conn, error) {
	c, err := sqlite.Driver{}.Open(ctx, asSQLite(dsn), opts)
	if err != nil {
		return nil, fmt.Errorf("open roomsdb: %w", err)
	}
	return roomsConn{c}, nil
}
func (roomsDriver) Prefix() string                { return "roomsdb:" }
func (roomsDriver) CheckDSN(dsn string) string    { return sqlite.Driver{}.CheckDSN(asSQLite(dsn)) }
func (roomsDriver) Location(dsn, s string) string { return sqlite.Driver{}.Location(asSQLite(dsn), s) }
func (roomsDriver) StateFile(dsn string) (string, bool) {
	return sqlite.Driver{}.StateFile(asSQLite(dsn))
}
func (roomsDriver) ResolveDSN(dsn, dir string) string {
	return "roomsdb:" + strings.TrimPrefix(sqlite.Driver{}.ResolveDSN(asSQLite(dsn), dir), "sqlite:")
}

// roomsConn is SQLite's connection under the test dialect's name.
type roomsConn struct{ store.Conn }

func (roomsConn) Name() string { return "roomsdb" }

// jobRoster is the test-only job: it reads its tenant's source through the
// registry and records how many people it accepted and rejected.
const jobRoster model.Job = "roster"

func rosterCycle(env runner.Env, t config.Tenant) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		id := uuid.NewString()
		if err := env.Store.StartRun(ctx, store.Run{ID: id, Job: jobRoster, Tenant: t.Name}); err != nil {
			return runner.Result{}, fmt.Errorf("record run start: %w", err)
		}
		counts, err := readRoster(ctx, t)
		res := runner.Result{Outcome: model.OutcomeOK, Counts: counts}
		var cause error
		switch {
		case err != nil:
			res.Outcome, cause = model.OutcomeFailed, err
		case counts["rejected"] > 0:
			res.Outcome, res.Cause, res.Next = model.OutcomeAttention, "rows rejected", "correct the roster"
			cause = fmt.Errorf("%d rows rejected", counts["rejected"])
		}
		if ferr := env.Store.FinishRun(ctx, store.RunResult{ID: id, Outcome: res.Outcome, Counts: counts, Err: cause}); ferr != nil {
			return res, fmt.Errorf("record run outcome: %w", ferr)
		}
		return res, err
	}
}

func readRoster(ctx context.Context, t config.Tenant) (map[string]int, error) {
	src, err := registry.Open(ctx, t.Source.Options, registry.Env{Tenant: t.Name})
	if err != nil {
		return nil, fmt.Errorf("open source: %w", err)
	}
	exports, err := src.Feed(ctx)
	if err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	counts := map[string]int{"accepted": 0, "rejected": 0}
	for _, x := range exports {
		_, err := x.Read(ctx, sources.Handler{
			Accept: func(model.Person) error { counts["accepted"]++; return nil },
			Reject: func(model.Rejection) error { counts["rejected"]++; return nil },
		})
		if err != nil {
			return counts, err
		}
	}
	return counts, nil
}

const roomsConfig = `
store:
  url: roomsdb:rooms.db
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      fixed:
        people:
          - {externalId: E1, email: ada@example.com, firstName: Ada, lastName: Lovelace}
          - {externalId: E2, email: grace@example.com, firstName: Grace, lastName: Hopper}
          - {externalId: E3, email: not-an-email, firstName: Bob, lastName: Byte}
`

// TestRecipesTogether configures the test-only dialect, source kind and job
// from one YAML file and runs the job through the runner.
func TestRecipesTogether(t *testing.T) {
	dir := t.TempDir()
	noEnv := func(string) (string, bool) { return "", false }
	cfg, err := config.Parse([]byte(roomsConfig), dir, noEnv, registry.Kinds{}, store.Dialects{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if want := "roomsdb:" + filepath.Join(dir, "rooms.db"); cfg.Store.URL.Value() != want {
		t.Errorf("store url %q, want %q (resolved by the dialect)", cfg.Store.URL.Value(), want)
	}
	st, err := store.Open(t.Context(), cfg.Store.URL.Value(), store.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if st.Dialect() != "roomsdb" {
		t.Errorf("dialect %q, want roomsdb", st.Dialect())
	}
	reg := runner.NewRegistry()
	if err := reg.RegisterKinds(runner.Env{Config: cfg, Store: st}, cfg.Tenants); err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Options{Registry: reg, Recorder: st, Metrics: metrics.New()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.RunOnce(t.Context(), runner.Key{Job: jobRoster, Tenant: "acme"})
	if err != nil || res.Outcome != model.OutcomeAttention || res.Counts["accepted"] != 2 || res.Counts["rejected"] != 1 {
		t.Fatalf("outcome %q, counts %v, err %v; want attention, 2 accepted, 1 rejected", res.Outcome, res.Counts, err)
	}
	runs, err := st.LastRuns(t.Context(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Job != jobRoster || runs[0].Tenant != "acme" || runs[0].Outcome != model.OutcomeAttention ||
		runs[0].Counts["accepted"] != 2 || runs[0].Error != "1 rows rejected" {
		t.Errorf("runs %+v, want the roster run recorded as attention", runs)
	}
}
