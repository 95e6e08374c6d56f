package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"

	"hrsync/internal/bench/baseline"
	"hrsync/internal/bench/gen"
	"hrsync/internal/bench/proc"
	"hrsync/internal/bench/seed"
	"hrsync/model"
	"hrsync/store"
)

// Names of the stores, and where PostgreSQL is found.
const (
	storeSQLite   = "sqlite"
	storePostgres = "postgres"
	pgEnv         = "HRSYNC_TEST_POSTGRES_URL"
)

// tenant is the generated configuration's only tenant.
const tenant = "bench"

// Targets of issue 3.
const (
	targetRatio   = 1.0   // plan wall time over baseline wall time
	targetPeakMiB = 250.0 // plan peak resident memory
	seedBatch     = 50000 // people per SavePeople transaction
	fileMode      = os.FileMode(0o600)
)

// seededAt is the creation and sighting time of every seeded person.
//
//nolint:gochecknoglobals // a constant in all but name (time.Time cannot be a const)
var seededAt = time.Date(2025, time.January, 6, 9, 0, 0, 0, time.UTC)

// options are the harness's settings.
type options struct {
	Rows        int
	Repeat      int
	Stores      []string
	Hrsync      string
	PostgresURL string
	WorkDir     string
	Keep        bool
	NoRunCheck  bool
	ProfileDir  string
	// NoImport skips the first import (its plans and its run).
	NoImport bool
	// ImportRunRows is the size of the first import's run (0: no run).
	ImportRunRows int
	// DropAge is how long each export of the daily runs (step 6) lies in
	// the drop folder before its run.
	DropAge time.Duration
	// self is the program re-executed for the baseline; "" means this
	// executable.
	self string
	// onSchema, when set, is told each PostgreSQL schema made (tests).
	onSchema func(string)
}

// files are the generated exports.
type files struct {
	prev, next string
	expect     gen.Counts
}

// storeResult is what was measured on one store.
type storeResult struct {
	Store string
	Rows  int
	Seed  time.Duration
	// Plan and Base are the plans of next.csv with no snapshot of the state
	// (the plan scans it), each beside a baseline.
	Plan []proc.Measurement
	Base []proc.Measurement
	// SnapPlan and SnapBase are the same plans once the no-change run
	// saved a snapshot of the state, each beside a baseline; empty with
	// -no-run-check (no run, so no snapshot).
	SnapPlan []proc.Measurement
	SnapBase []proc.Measurement
	NoChange proc.Measurement
	Rerun    *proc.Measurement
	// Steady are the runs of people with no change once the snapshot is
	// current (the daily run that finds nothing to do), each on the
	// previous export's rows rotated (new content, the same people).
	Steady []proc.Measurement
	// Import are the plans of next.csv against an empty state (a first
	// import: every row new); ImportRun is the run of people of its first
	// ImportRunRows rows against an emulator of the API (nil: not run).
	Import        []proc.Measurement
	ImportRows    int // the rows of next.csv, every one new
	ImportRun     *proc.Measurement
	ImportRunRows int
	// Procs are the plans from the snapshot at GOMAXPROCS=1 (Procs[0]) and
	// GOMAXPROCS=2 (Procs[1]).
	Procs [2][]proc.Measurement
	// Checks lists each check made, with its outcome.
	Checks []check
}

// States of the plan's state, as the table names them.
const (
	stateScan     = "scan"
	stateSnapshot = "snapshot"
)

// check is one correctness check of the run.
type check struct {
	Name string
	OK   bool
	Note string
}

func (r *storeResult) check(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, check{Name: name, OK: ok, Note: fmt.Sprintf(format, args...)})
}

// run is the harness: generate, then measure every store, then report.
func run(ctx context.Context, o options, w io.Writer) (err error) {
	dir, cleanup, err := workDir(o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if o.self == "" {
		if o.self, err = os.Executable(); err != nil {
			return fmt.Errorf("find own executable: %w", err)
		}
	}
	if o.Hrsync == "" {
		o.Hrsync = filepath.Join(dir, "hrsync")
		fmt.Fprintf(w, "building hrsync...\n")
		if err := buildHrsync(ctx, o.Hrsync); err != nil {
			return err
		}
	}
	start := time.Now()
	f, err := generate(dir, o.Rows)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "generated %d-row exports in %.1fs: next = %d unchanged, %d changed, %d new, %d departed\n",
		o.Rows, time.Since(start).Seconds(), f.expect.Unchanged, f.expect.Changed, f.expect.New, f.expect.Departed)

	var results []storeResult
	for _, name := range o.Stores {
		res, err := measureStore(ctx, o, dir, name, f, w)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, res)
	}
	fmt.Fprintln(w)
	writeTable(w, results)
	fmt.Fprintln(w)
	failed := writeChecks(w, results)
	if failed > 0 {
		return fmt.Errorf("%d checks failed", failed)
	}
	return nil
}

// workDir makes (or takes) the directory of the run's files; cleanup
// removes it unless it is kept.
func workDir(o options) (string, func() error, error) {
	if o.WorkDir != "" {
		if err := os.MkdirAll(o.WorkDir, 0o700); err != nil {
			return "", nil, fmt.Errorf("make work directory: %w", err)
		}
		return o.WorkDir, func() error { return nil }, nil
	}
	dir, err := os.MkdirTemp("", "peoplebench-")
	if err != nil {
		return "", nil, fmt.Errorf("make work directory: %w", err)
	}
	if o.Keep {
		return dir, func() error { return nil }, nil
	}
	return dir, func() error {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove work directory: %w", err)
		}
		return nil
	}, nil
}

// buildHrsync builds ./cmd/hrsync into out, as `make build` does.
func buildHrsync(ctx context.Context, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "hrsync/cmd/hrsync")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build hrsync: %w: %s", err, strings.TrimSpace(string(msg)))
	}
	return nil
}

// generate writes the previous and the next export into dir.
func generate(dir string, n int) (files, error) {
	d := gen.DefaultDelta(n)
	f := files{prev: filepath.Join(dir, "previous.csv"), next: filepath.Join(dir, "next.csv"), expect: d.Expect(n)}
	if err := writeExport(f.prev, gen.Previous(n)); err != nil {
		return files{}, err
	}
	if err := writeExport(f.next, d.Next(n)); err != nil {
		return files{}, err
	}
	return f, nil
}

func writeExport(path string, people iter.Seq[model.Person]) error {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fileMode)
	if err != nil {
		return fmt.Errorf("create export: %w", err)
	}
	if _, err := gen.WriteCSV(fh, people); err != nil {
		_ = fh.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// target is one store to measure: its DSN, schema and how to remove it.
type target struct {
	dsn, schema string
	drop        func() error
}

// newTarget returns a fresh target on store name: a new SQLite file
// (state-<name><suffix>.db), or a new PostgreSQL schema.
func newTarget(o options, dir, name, suffix string) (target, error) {
	if name == storeSQLite {
		path := filepath.Join(dir, "state-"+name+suffix+".db")
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return target{}, fmt.Errorf("remove old state: %w", err)
			}
		}
		return target{dsn: "sqlite:" + path, drop: func() error { return nil }}, nil
	}
	if o.PostgresURL == "" {
		return target{}, fmt.Errorf("no PostgreSQL: set %s or pass -postgres (or -stores sqlite)", pgEnv)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return target{}, fmt.Errorf("random schema name: %w", err)
	}
	schema := "hrsync_bench_" + hex.EncodeToString(b[:])
	if o.onSchema != nil {
		o.onSchema(schema)
	}
	if o.Keep {
		// Kept for a look afterwards (a profile by hand, say); its name is
		// in the generated hrsync.yaml.
		return target{dsn: o.PostgresURL, schema: schema, drop: func() error { return nil }}, nil
	}
	// drop runs at cleanup, after the run's context may be done: it bounds itself.
	drop := func() error {
		db, err := sql.Open("postgres", o.PostgresURL)
		if err != nil {
			return fmt.Errorf("drop schema: %w", err)
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+pq.QuoteIdentifier(schema)+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
		return nil
	}
	return target{dsn: o.PostgresURL, schema: schema, drop: drop}, nil
}

// measureStore seeds one store and measures the plan and the baseline on it.
func measureStore(ctx context.Context, o options, dir, name string, f files, w io.Writer) (res storeResult, err error) {
	res = storeResult{Store: name, Rows: o.Rows}
	t, err := newTarget(o, dir, name, "") //nolint:contextcheck // its cleanup bounds itself (see drop)
	if err != nil {
		return res, err
	}
	defer func() {
		if derr := t.drop(); derr != nil && err == nil {
			err = derr
		}
	}()

	start := time.Now()
	before, err := seedState(ctx, t, o.Rows)
	if err != nil {
		return res, err
	}
	res.Seed = time.Since(start)
	fmt.Fprintf(w, "%s: seeded %d people in %.1fs\n", name, before.Rows, res.Seed.Seconds())

	cfg, drop, err := writeConfig(filepath.Join(dir, name), t.schema)
	if err != nil {
		return res, err
	}
	env := childEnv(map[string]string{
		"HRSYNC_STORE_URL":  t.dsn,
		"HRSYNC_LOG_FORMAT": "json",
		"HRSYNC_LOG_LEVEL":  "warn",
	})

	// The plans with no snapshot: the state is as seeded, never run on.
	var scanOut []byte
	res.Plan, res.Base, scanOut, err = measurePlans(ctx, o, env, cfg, f, &res, stateScan, w)
	if err != nil {
		return res, err
	}

	// A rerun with no change: the previous export against the state seeded from it.
	same := gen.Counts{Rows: o.Rows, Unchanged: o.Rows}
	res.NoChange, err = proc.Run(ctx, o.self, env, o.Hrsync, "plan", "--config", cfg, "--json", f.prev)
	if err != nil {
		return res, fmt.Errorf("plan with no change: %w", err)
	}
	checkPlan(&res, "plan with no change", res.NoChange.Stdout, same)
	fmt.Fprintf(w, "%s: plan with no change %.2fs %.0f MiB\n", name, res.NoChange.Wall.Seconds(), res.NoChange.PeakMiB())

	if !o.NoRunCheck {
		if err := measureRerun(ctx, o, t, env, cfg, drop, f, &res, scanOut, w); err != nil {
			return res, err
		}
	} else {
		fmt.Fprintf(w, "%s: no run, so no snapshot: the plans from a snapshot are not measured\n", name)
	}

	after, err := checksum(ctx, t)
	if err != nil {
		return res, err
	}
	res.check("no person row written", after == before,
		"people before: %d rows, hash %016x; after: %d rows, hash %016x", before.Rows, before.Hash, after.Rows, after.Hash)

	if o.ProfileDir != "" {
		if err := profilePlan(ctx, t, f.next, filepath.Join(o.ProfileDir, name)); err != nil {
			return res, err
		}
		fmt.Fprintf(w, "%s: wrote cpu.pprof and heap.pprof into %s\n", name, filepath.Join(o.ProfileDir, name))
	}
	if !o.NoImport {
		if err := measureImport(ctx, o, dir, f, &res, w); err != nil {
			return res, err
		}
	}
	return res, nil
}

// measureRerun runs people once with no change (no API call may be made),
// checks the snapshot that run saved, and measures the plans again from
// that snapshot, which must plan the same as the scan did.
func measureRerun(ctx context.Context, o options, t target, env []string, cfg, drop string, f files, res *storeResult, scanOut []byte, w io.Writer) error {
	name := res.Store
	rm, calls, err := rerun(ctx, o.self, env, o.Hrsync, cfg, drop, f.prev, 0)
	if err != nil {
		return err
	}
	res.Rerun = &rm
	res.check("run people with no change makes no API call", calls == 0, "%d requests reached the API", calls)
	fmt.Fprintf(w, "%s: run people with no change %.2fs %.0f MiB, %d API requests\n", name, rm.Wall.Seconds(), rm.PeakMiB(), calls)

	// The run saved a snapshot of the state, as every run does when
	// there is none: the same plans again, now from the snapshot.
	valid, err := snapshotValid(ctx, t)
	if err != nil {
		return err
	}
	res.check("run people saved a valid state snapshot", valid, "snapshot valid at the current version: %v", valid)
	var snapOut []byte
	res.SnapPlan, res.SnapBase, snapOut, err = measurePlans(ctx, o, env, cfg, f, res, stateSnapshot, w)
	if err != nil {
		return err
	}
	samePlans(res, scanOut, snapOut)
	if err := measureProcs(ctx, o, env, cfg, f, res, w); err != nil {
		return err
	}
	return measureSteady(ctx, o, env, cfg, drop, f, res, w)
}

// measureSteady runs people o.Repeat times more with no change, now with a
// current snapshot, each on a new file of the same people (the previous
// export's rows rotated, so that it is not content already processed),
// dropped o.DropAge before its run: like a daily export, written well
// before its run, the file is then hashed once (docs/benchmarks.md, "The
// daily run hashes its file once").
func measureSteady(ctx context.Context, o options, env []string, cfg, drop string, f files, res *storeResult, w io.Writer) error {
	for i := range o.Repeat {
		file := filepath.Join(filepath.Dir(f.prev), fmt.Sprintf("rotated-%d.csv", i+1))
		if err := writeRotated(f.prev, file, (i+1)*o.Rows/(o.Repeat+1)); err != nil {
			return err
		}
		m, calls, err := rerun(ctx, o.self, env, o.Hrsync, cfg, drop, file, o.DropAge)
		if err != nil {
			return err
		}
		res.Steady = append(res.Steady, m)
		res.check(fmt.Sprintf("run people with no change, snapshot current (%d), makes no API call", i+1), calls == 0,
			"%d requests reached the API", calls)
		fmt.Fprintf(w, "%s: run people with no change, snapshot current, run %d: %.2fs %.0f MiB, %d API requests\n",
			res.Store, i+1, m.Wall.Seconds(), m.PeakMiB(), calls)
	}
	return nil
}

// writeRotated writes the export src to dst with its data rows rotated by
// k: the rows from the k-th on, then the first k (the generator's rows are
// one line each).
func writeRotated(src, dst string, k int) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read export: %w", err)
	}
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	rows := bytes.SplitAfter(rest, []byte("\n"))
	if n := len(rows); n > 0 && len(rows[n-1]) == 0 {
		rows = rows[:n-1]
	}
	k = min(k, len(rows))
	out := make([]byte, 0, len(b))
	out = append(append(out, head...), '\n')
	for _, r := range slices.Concat(rows[k:], rows[:k]) {
		out = append(out, r...)
	}
	// Synced, as a daily export written well before its run has been
	// written back: otherwise the write-back of its 100 MB may fall in
	// the measured run (or a later one).
	fh, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return fmt.Errorf("write rotated export: %w", err)
	}
	_, werr := fh.Write(out)
	if werr == nil {
		werr = fh.Sync()
	}
	if err := errors.Join(werr, fh.Close()); err != nil {
		return fmt.Errorf("write rotated export: %w", err)
	}
	return nil
}

// measurePlans measures o.Repeat plans of next.csv, each beside a
// baseline, checks the first plan's counts and where its state came from,
// and returns the measurements and the first plan's output.
func measurePlans(ctx context.Context, o options, env []string, cfg string, f files, res *storeResult, state string,
	w io.Writer) (plans, bases []proc.Measurement, first []byte, err error) {
	for i := range o.Repeat {
		pm, err := proc.Run(ctx, o.self, env, o.Hrsync, "plan", "--config", cfg, "--json", f.next)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("plan (%s): %w", state, err)
		}
		plans = append(plans, pm)
		if i == 0 {
			first = pm.Stdout
			checkPlan(res, "plan ("+state+") finds the generated diff", pm.Stdout, f.expect)
			checkStateFrom(res, "plan ("+state+") says where its state came from", pm.Stdout, state)
		}
		bm, err := proc.Run(ctx, o.self, env, o.self, baselineArg, f.prev, f.next)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("baseline: %w", err)
		}
		bases = append(bases, bm)
		if i == 0 && state == stateScan {
			checkBaseline(res, bm.Stdout, o.Rows, f.expect)
		}
		fmt.Fprintf(w, "%s: %s run %d: plan %.2fs %.0f MiB, baseline %.2fs %.0f MiB\n",
			res.Store, state, i+1, pm.Wall.Seconds(), pm.PeakMiB(), bm.Wall.Seconds(), bm.PeakMiB())
	}
	return plans, bases, first, nil
}

// snapshotValid tells whether the bench tenant has a state snapshot saved
// at its current version.
func snapshotValid(ctx context.Context, t target) (bool, error) {
	st, err := store.Open(ctx, t.dsn, store.Options{Schema: t.schema})
	if err != nil {
		return false, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	valid, err := st.PeopleSnapshotValid(ctx, tenant)
	if err != nil {
		return false, fmt.Errorf("check the state snapshot: %w", err)
	}
	return valid, nil
}

// seedState seeds the store with the previous export's people and returns
// its checksum.
func seedState(ctx context.Context, t target, n int) (seed.Sum, error) {
	st, err := store.Open(ctx, t.dsn, store.Options{Schema: t.schema, Migrate: true})
	if err != nil {
		return seed.Sum{}, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	if _, err := seed.Seed(ctx, st, tenant, gen.Previous(n), seedBatch, seededAt); err != nil {
		return seed.Sum{}, err
	}
	return seed.Checksum(ctx, st, tenant)
}

func checksum(ctx context.Context, t target) (seed.Sum, error) {
	st, err := store.Open(ctx, t.dsn, store.Options{Schema: t.schema})
	if err != nil {
		return seed.Sum{}, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	return seed.Checksum(ctx, st, tenant)
}

// planOutput is the part of `hrsync plan --json` the harness checks.
type planOutput struct {
	Stats struct {
		Rows     int `json:"rows"`
		Accepted int `json:"accepted"`
		Rejected int `json:"rejected"`
	} `json:"stats"`
	Changed   []json.RawMessage `json:"changed"`
	Returned  []string          `json:"returned"`
	Departed  []string          `json:"departed"`
	Unchanged int               `json:"unchanged"`
	Held      []string          `json:"held"`
	Calls     []struct {
		ExternalIDs []string `json:"externalIds"`
	} `json:"calls"`
	Safeguards []struct {
		Name string `json:"name"`
	} `json:"safeguards"`
	// StateFrom says where the plan's state came from: "snapshot" or
	// "scan"; empty from a binary that does not say.
	StateFrom string `json:"stateFrom"`
}

// readPlan reads the one plan printed by `hrsync plan --json`.
func readPlan(out []byte) (planOutput, error) {
	// The plan's document is {"people": [...]}; older binaries printed the
	// array alone.
	var doc struct {
		People []planOutput `json:"people"`
	}
	var plans []planOutput
	if err := json.Unmarshal(out, &doc); err == nil {
		plans = doc.People
	} else if err := json.Unmarshal(out, &plans); err != nil {
		return planOutput{}, fmt.Errorf("read the plan: %w", err)
	}
	if len(plans) != 1 {
		return planOutput{}, fmt.Errorf("%d plans, want 1", len(plans))
	}
	return plans[0], nil
}

// checkStateFrom checks that the plan names where its state came from as
// want, when the binary says it at all.
func checkStateFrom(res *storeResult, name string, out []byte, want string) {
	p, err := readPlan(out)
	switch {
	case err != nil:
		res.check(name, false, "%v", err)
	case p.StateFrom == "":
		res.check(name, true, "not said (the binary's plan has no stateFrom yet); want %q", want)
	default:
		res.check(name, p.StateFrom == want, "stateFrom %q, want %q", p.StateFrom, want)
	}
}

// samePlans checks that the plan from the snapshot found what the plan
// from the scan found: counts, the changed, departed and returned people,
// the calls.
func samePlans(res *storeResult, scan, snap []byte) {
	a, aerr := readPlan(scan)
	b, berr := readPlan(snap)
	if err := errors.Join(aerr, berr); err != nil {
		res.check("plan from the snapshot equals the plan from the scan", false, "%v", err)
		return
	}
	a.StateFrom, b.StateFrom = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	created := 0
	for _, c := range b.Calls {
		created += len(c.ExternalIDs)
	}
	res.check("plan from the snapshot equals the plan from the scan", string(ja) == string(jb),
		"rows %d, unchanged %d, changed %d, new %d, departed %d from the snapshot (%d bytes of plan compared)",
		b.Stats.Rows, b.Unchanged, len(b.Changed), created, len(b.Departed), len(ja))
}

// checkPlan checks the plan printed by `hrsync plan --json` against the
// counts the generator expects: new people in calls, nothing else called.
func checkPlan(res *storeResult, name string, out []byte, want gen.Counts) {
	p, err := readPlan(out)
	if err != nil {
		res.check(name, false, "cannot read the plan: %v", err)
		return
	}
	created := 0
	for _, c := range p.Calls {
		created += len(c.ExternalIDs)
	}
	got := gen.Counts{Rows: p.Stats.Rows, Unchanged: p.Unchanged, Changed: len(p.Changed), New: created, Departed: len(p.Departed)}
	ok := got == want && p.Stats.Rejected == 0 && len(p.Returned) == 0 && len(p.Held) == 0 && len(p.Safeguards) == 0
	res.check(name, ok, "rows %d, unchanged %d, changed %d, new %d in %d calls, departed %d, rejected %d, safeguards %d (want rows %d, unchanged %d, changed %d, new %d, departed %d)",
		got.Rows, got.Unchanged, got.Changed, got.New, len(p.Calls), got.Departed, p.Stats.Rejected, len(p.Safeguards),
		want.Rows, want.Unchanged, want.Changed, want.New, want.Departed)
}

func checkBaseline(res *storeResult, out []byte, n int, want gen.Counts) {
	var got baseline.Result
	if err := json.Unmarshal(out, &got); err != nil {
		res.check("baseline finds the generated diff", false, "cannot read the baseline's result: %v", err)
		return
	}
	exp := baseline.Result{Previous: n, Rows: want.Rows, New: want.New, Changed: want.Changed, Unchanged: want.Unchanged, Departed: want.Departed}
	res.check("baseline finds the generated diff", got == exp, "%+v", got)
}
