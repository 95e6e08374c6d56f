package grants_test

// A world for the grants job's tests: a real SQLite store and the emulator
// over loopback, with a clock the test moves, the people sync fed with
// exports the test writes, and a record of every grant the platform
// applied, read at the platform's door (the request bodies it answered
// with success), independently of the job's own ledger.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hrsync/apiclient"
	"hrsync/config"
	"hrsync/emulator"
	"hrsync/internal/emutest"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/csvsrc"
	"hrsync/store"
	"hrsync/sync/grants"
	"hrsync/sync/people"
	"hrsync/sync/sender"

	_ "hrsync/sources/dropfolder" // the world's tenant reads a local drop folder
	"hrsync/sources/registry"
)

// clock is a settable clock shared by the store and the jobs.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// applied is one grant the platform applied: a person of a createPeople
// call answered with success, with the balance the call added.
type applied struct {
	ExternalID string
	Amount     float64
	Email      bool
}

// recorder records, at the platform's door, the people of every
// createPeople call answered with success.
type recorder struct {
	mu    sync.Mutex
	calls int
	all   []applied
}

func (r *recorder) take() []applied {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.all
	r.all = nil
	return out
}

func (r *recorder) callCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// statusWriter keeps the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (r *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/people") {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, req)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls++
		if sw.status/100 != 2 {
			return
		}
		var in struct {
			People []struct {
				ExternalID string   `json:"externalId"`
				AddBalance *float64 `json:"addBalance"`
			} `json:"people"`
			Amount          *float64 `json:"amount"`
			ShouldSendEmail *bool    `json:"shouldSendEmail"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			panic(fmt.Sprintf("recorder: %v", err))
		}
		for _, p := range in.People {
			a := applied{ExternalID: p.ExternalID, Email: in.ShouldSendEmail != nil && *in.ShouldSendEmail}
			if p.AddBalance != nil {
				a.Amount += *p.AddBalance
			}
			if in.Amount != nil {
				a.Amount += *in.Amount
			}
			r.all = append(r.all, a)
		}
	})
}

// world is the grants job of tenant acme with its store, the emulator and
// the people sync.
type world struct {
	t      *testing.T
	st     *store.Store
	emu    *emulator.Emulator
	client *apiclient.Client
	rec    *recorder
	clock  *clock
	dir    string
	last   string // the last export the people sync processed
	seq    int
	// source, when set, is the tenant's source of another kind than the
	// CSV files of sync (the SCIM directory): the grants job reads it.
	source registry.Source
}

func newWorld(t *testing.T, start time.Time) *world {
	t.Helper()
	return newWorldOn(t, start, "sqlite")
}

// eachDialect runs fn on a world on SQLite and on one on PostgreSQL (a
// schema of its own on the server HRSYNC_TEST_POSTGRES_URL names; the test
// fails without it).
func eachDialect(t *testing.T, start time.Time, fn func(t *testing.T, w *world)) {
	t.Helper()
	for _, d := range []string{"sqlite", "postgres"} {
		t.Run(d, func(t *testing.T) { fn(t, newWorldOn(t, start, d)) })
	}
}

// openStore opens a migrated store of dialect ("sqlite" or "postgres") on
// the clock.
func openStore(t *testing.T, dialect, dir string, clk *clock) *store.Store {
	t.Helper()
	url, opts := "sqlite:"+filepath.Join(dir, "state.db"), store.Options{Migrate: true, Now: clk.Now}
	if dialect == "postgres" {
		url = os.Getenv("HRSYNC_TEST_POSTGRES_URL")
		if url == "" {
			t.Fatal("PostgreSQL tests need a server: set HRSYNC_TEST_POSTGRES_URL")
		}
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		opts.Schema = "hrsync_test_" + hex.EncodeToString(b[:])
		t.Cleanup(func() { dropSchema(t, url, opts.Schema) })
	}
	st, err := store.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// dropSchema drops a test's PostgreSQL schema.
func dropSchema(t *testing.T, url, schema string) {
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Errorf("drop schema: %v", err)
		return
	}
	defer func() { _ = db.Close() }()
	if _, err := db.ExecContext(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
		t.Errorf("drop schema: %v", err)
	}
}

func newWorldOn(t *testing.T, start time.Time, dialect string) *world {
	t.Helper()
	dir := t.TempDir()
	clk := &clock{now: start}
	st := openStore(t, dialect, dir, clk)
	emu := emutest.New(t)
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(emutest.Validated(t, emu)))
	t.Cleanup(srv.Close)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: srv.URL, Token: emutest.Token, UserAgentVersion: "test",
		Timeout: 5 * time.Second, MaxAttempts: 3, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
		RatePerSecond: 10000, Burst: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, st: st, emu: emu, client: client, rec: rec, clock: clk, dir: dir}
}

// row is one person of an export.
type row struct {
	id, location, department string
	start, birth             time.Time
}

func csvOptions() sources.CSVOptions {
	cols := map[string]string{}
	for _, f := range []string{"externalId", "email", "firstName", "lastName", "department", "location", "startDate", "birthDate"} {
		cols[f] = f
	}
	return sources.CSVOptions{Mapping: sources.Mapping{Columns: cols}}
}

// export is a CSV file as the drop folder would hand it over.
type export struct {
	csvsrc.File
	sha  string
	size int64
}

func (f *export) SHA256() string                                      { return f.sha }
func (f *export) Size() int64                                         { return f.size }
func (f *export) Archive(bool, sources.RenderReports) (string, error) { return f.Path, nil }

// sync runs the people sync on an export of rows, as of the clock.
func (w *world) sync(rows []row) {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("externalId,email,firstName,lastName,department,location,startDate,birthDate\n")
	for _, r := range rows {
		birth := "" // a row without a birth date
		if !r.birth.IsZero() {
			birth = r.birth.Format("2006-01-02")
		}
		fmt.Fprintf(&b, "%s,%s@example.com,First,Last %s,%s,%s,%s,%s\n", r.id, strings.ToLower(r.id), r.id,
			r.department, r.location, r.start.Format("2006-01-02"), birth)
	}
	w.seq++
	path := filepath.Join(w.dir, fmt.Sprintf("export-%04d.csv", w.seq))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		w.t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(b.String()))
	f := &export{File: csvsrc.File{Path: path, Options: csvOptions()}, sha: hex.EncodeToString(sum[:]), size: int64(b.Len())}
	w.syncFeed(func(context.Context) ([]people.Export, error) { return []people.Export{f}, nil })
	w.last = path
}

// syncFeed runs the people sync on the exports of feed, as of the clock;
// every export must be clean.
func (w *world) syncFeed(feed people.Feed) {
	w.t.Helper()
	job, err := people.New(people.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		BatchSize: 100, Concurrency: 2, DefaultBalance: 0, Safeguards: people.DefaultSafeguards(), Now: w.clock.Now, FinishTimeout: 30 * time.Second,
		Birthdays: w.st,
	}, w.st, sender.NewJournal(w.st), w.client, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	rep, err := job.RunOnce(w.t.Context(), feed, people.RunFlags{OverrideSafeguards: true})
	if err != nil {
		w.t.Fatalf("people sync: %v", err)
	}
	if o := rep.Outcome(); o != model.OutcomeOK {
		w.t.Fatalf("people sync: outcome %s (the export must be clean)", o)
	}
	w.rec.take() // the people sync's own calls are not grants of the rules
}

// lastExport hands the grants job the last export the people sync read:
// the world's source when set (a SCIM directory), else the last CSV file.
func (w *world) lastExport(ctx context.Context) (sources.Source, bool, error) {
	if w.source != nil {
		return w.source.LastExport(ctx, nil)
	}
	if w.last == "" {
		return nil, false, nil
	}
	return &csvsrc.File{Path: w.last, Options: csvOptions()}, true, nil
}

// loadGrants reads a grants section of a configuration as Load does.
func loadGrants(t *testing.T, yamlGrants string) config.Grants {
	t.Helper()
	doc := `tenants:
  - name: acme
    companyId: ` + emulator.DatasetCompanyID + `
    collectionId: ` + emulator.PlainCollectionID + `
    source: {csv: {dir: drop}}
    grants:
` + indent(yamlGrants, "      ")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "drop"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hrsync.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) (string, bool) { return "", false }, registry.Kinds{}, store.Dialects{})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg.Tenants[0].Grants
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// job is the grants job with rules g on the world's clock.
func (w *world) job(g config.Grants) *grants.Job {
	w.t.Helper()
	j, err := grants.New(grants.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		Grants: g, BatchSize: 50, Concurrency: 2, Now: w.clock.Now,
	}, w.st, sender.NewJournal(w.st), w.client, w.lastExport, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return j
}

// run runs the grants job once and fails the test on an error.
func (w *world) run(j *grants.Job, flags grants.RunFlags) *grants.Report {
	w.t.Helper()
	rep, err := j.RunOnce(w.t.Context(), flags)
	if err != nil {
		w.t.Fatalf("grants run: %v", err)
	}
	return rep
}
