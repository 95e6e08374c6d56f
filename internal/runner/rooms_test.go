package runner_test

// The three recipes of docs/architecture.md together: a test-only store
// dialect ("roomsdb:"), a test-only source kind ("roster") and a test-only
// job ("roster") each plug in with one registration, are configured by the
// config package through the registries (config.Parse with registry.Kinds
// and store.Dialects), and run through the runner's RunOnce, which records
// the job's run in the state the new dialect keeps.

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/store"
	"hrsync/store/sqlite"
)

// The three registrations, one line each (in real code, each in its own
// package's init).
func init() {
	store.Register(roomsDriver{}, "roomsdb")
	registry.Register(registry.Kind{Section: "roster", New: func() registry.Options { return &rosterOptions{} }})
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

// rosterOptions is the test-only source kind: people written in the
// configuration itself, read through sources.Run as every kind reads.
type rosterOptions struct {
	People          []map[string]string `yaml:"people"`
	sources.Mapping `yaml:",inline"`
}

func (o *rosterOptions) Kind() string               { return "roster" }
func (o *rosterOptions) FillDefaults()              { o.Mapping = o.WithDefaults() }
func (o *rosterOptions) ResolvePaths(func(*string)) {}
func (o *rosterOptions) BalanceMax() float64        { return o.Mapping.BalanceMax() }
func (o *rosterOptions) SetReportMode(fs.FileMode)  {}
func (o *rosterOptions) Describe() string           { return fmt.Sprintf("a roster of %d", len(o.People)) }
func (o *rosterOptions) SecretsSet() []string       { return nil }
func (o *rosterOptions) HasFolder() bool            { return false }
func (o *rosterOptions) Validate() []error          { return o.Mapping.Validate() }
func (o *rosterOptions) ResolveSecrets(_, _ func(field, name string) (string, bool)) []error {
	return nil
}
func (o *rosterOptions) Files([]string) (func(context.Context) ([]sources.Export, error), error) {
	return nil, &registry.Refusal{Reason: "reads no files", Err: registry.ErrNoFiles}
}
func (o *rosterOptions) Open(context.Context, registry.Env) (registry.Source, error) {
	return rosterSource{o}, nil
}

// rosterSource serves the roster as one export.
type rosterSource struct{ o *rosterOptions }

func (s rosterSource) Feed(context.Context) ([]sources.Export, error) {
	return []sources.Export{rosterExport(s)}, nil
}
func (s rosterSource) LastExport(context.Context, registry.LastRecord) (sources.Source, bool, error) {
	return rosterExport(s), true, nil
}
func (s rosterSource) CheckRestore(context.Context, string) error {
	return &registry.Refusal{Reason: "keeps no failed exports", Err: registry.ErrNoRestore}
}
func (s rosterSource) Restore(ctx context.Context, _ string) (sources.Export, error) {
	return nil, s.CheckRestore(ctx, "")
}
func (s rosterSource) Folder() (sources.DropFolder, error) {
	return nil, &registry.Refusal{Reason: "has no folder", Err: registry.ErrNoFolder}
}

// rosterExport reads the roster's people.
type rosterExport struct{ o *rosterOptions }

func (x rosterExport) Name() string                                        { return "roster" }
func (x rosterExport) SHA256() string                                      { return "" }
func (x rosterExport) Size() int64                                         { return 0 }
func (x rosterExport) Archive(bool, sources.RenderReports) (string, error) { return "", nil }
func (x rosterExport) Read(ctx context.Context, h sources.Handler) (sources.Stats, error) {
	v, err := sources.NewValidator("roster", x.o.Mapping, time.Now())
	if err != nil {
		return sources.Stats{}, fmt.Errorf("roster validator: %w", err)
	}
	st, err := sources.Run(ctx, v, &rosterRows{people: x.o.People, cols: x.o.Columns}, h)
	if err != nil {
		return st, fmt.Errorf("read roster: %w", err)
	}
	return st, nil
}

// rosterRows hands the people to sources.Run in one batch.
type rosterRows struct {
	people []map[string]string
	cols   map[string]string
	done   bool
}

func (r *rosterRows) Next(_ context.Context, b *sources.Batch) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	b.Rows = b.Rows[:0]
	for i, p := range r.people {
		row := sources.Row{Line: i + 1}
		for f := range sources.NumFields {
			row.Text[f] = p[r.cols[f.String()]]
		}
		b.Rows = append(b.Rows, row)
	}
	return nil
}
func (r *rosterRows) Fill(*sources.Batch) error { return nil }

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
      roster:
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
