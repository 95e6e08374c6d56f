package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hrsync/internal/bench/baseline"
	"hrsync/internal/bench/gen"
	"hrsync/internal/bench/proc"
)

// TestMain lets the test binary act as the harness's children: the
// launcher and the baseline.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == proc.LauncherArg || os.Args[1] == baselineArg) {
		os.Exit(mainCode(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestParseFlags(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		o, err := parseFlags(nil, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Rows != 1000000 || o.Repeat != 3 || strings.Join(o.Stores, ",") != "sqlite,postgres" || o.ImportRunRows != 1000000 || o.NoImport {
			t.Errorf("defaults = %+v", o)
		}
	})
	t.Run("stores and size", func(t *testing.T) {
		o, err := parseFlags([]string{"-rows", "100000", "-stores", " sqlite ", "-repeat", "2"}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Rows != 100000 || o.Repeat != 2 || len(o.Stores) != 1 || o.Stores[0] != storeSQLite {
			t.Errorf("options = %+v", o)
		}
	})
	for name, args := range map[string][]string{
		"unknown store": {"-stores", "mysql"},
		"no store":      {"-stores", ","},
		"zero rows":     {"-rows", "0"},
		"zero repeat":   {"-repeat", "0"},
		"negative run":  {"-import-run-rows", "-1"},
		"extra args":    {"file.csv"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
				t.Errorf("no error for %q", args)
			}
		})
	}
}

func TestReport(t *testing.T) {
	t.Run("summarize", func(t *testing.T) {
		if s := summarize([]float64{3, 1, 2}); s != (summary{median: 2, lo: 1, hi: 3}) {
			t.Errorf("odd = %+v", s)
		}
		if s := summarize([]float64{4, 1, 2, 3}); s != (summary{median: 2.5, lo: 1, hi: 4}) {
			t.Errorf("even = %+v", s)
		}
		if s := summarize(nil); s != (summary{}) {
			t.Errorf("empty = %+v", s)
		}
	})
	t.Run("verdict", func(t *testing.T) {
		cases := map[string]struct {
			ratio, peak float64
			want        string
		}{
			"meets":     {0.9, 120, "meets targets"},
			"equal":     {1.0, 250, "meets targets"},
			"slower":    {1.5, 120, "MISSES: 1.50x the baseline's time"},
			"over":      {0.5, 251, "MISSES: peak over 250 MiB"},
			"both miss": {2, 300, "MISSES: 2.00x the baseline's time, peak over 250 MiB"},
		}
		for name, c := range cases {
			t.Run(name, func(t *testing.T) {
				if got := verdict(c.ratio, c.peak); got != c.want {
					t.Errorf("verdict(%v, %v) = %q, want %q", c.ratio, c.peak, got, c.want)
				}
			})
		}
	})
	t.Run("table", func(t *testing.T) {
		m := func(sec, mib float64) proc.Measurement {
			return proc.Measurement{Wall: time.Duration(sec * float64(time.Second)), PeakRSS: int64(mib * proc.MiB)}
		}
		var buf bytes.Buffer
		writeTable(&buf, []storeResult{
			{Store: "sqlite", Rows: 1000, Plan: []proc.Measurement{m(2, 100), m(3, 110), m(4, 120)}, Base: []proc.Measurement{m(1, 50), m(1, 50), m(1, 50)},
				SnapPlan: []proc.Measurement{m(1.5, 100), m(1.5, 100), m(1.5, 100)}, SnapBase: []proc.Measurement{m(2, 50), m(2, 50), m(2, 50)}},
			{Store: "postgres", Rows: 1000, Plan: []proc.Measurement{m(1, 90), m(1, 90), m(1, 90)}, Base: []proc.Measurement{m(2, 50), m(2, 50), m(2, 50)}},
		})
		out := buf.String()
		for _, want := range []string{
			"state", "plan wall s", "3.00 (2.00-4.00)", "110 (100-120)", "3.00   MISSES: 3.00x the baseline's time",
			"\nsqlite    snapshot  1000  1.50", "0.75   meets targets", "0.50   meets targets", "medians of 3 runs",
			"\nsqlite: scan 3.00x the baseline (plan 3.00s, baseline 1.00s); snapshot 0.75x the baseline (plan 1.50s, baseline 2.00s)\n",
			"\npostgres: scan 0.50x the baseline (plan 1.00s, baseline 2.00s)\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("table lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("checks", func(t *testing.T) {
		var res storeResult
		res.check("good", true, "fine")
		res.check("bad", false, "%d calls", 3)
		var buf bytes.Buffer
		if n := writeChecks(&buf, []storeResult{res}); n != 1 {
			t.Errorf("failed = %d, want 1", n)
		}
		if !strings.Contains(buf.String(), "ok   : good: fine") || !strings.Contains(buf.String(), "FAIL : bad: 3 calls") {
			t.Errorf("checks output:\n%s", buf.String())
		}
	})
}

func TestCheckPlan(t *testing.T) {
	want := gen.Counts{Rows: 3, Unchanged: 1, Changed: 1, New: 1}
	t.Run("matching plan", func(t *testing.T) {
		out := `[{"stats":{"rows":3,"accepted":3,"rejected":0},"changed":[{"externalId":"E2"}],"departed":[],"unchanged":1,"calls":[{"externalIds":["E3"]}]}]`
		var res storeResult
		checkPlan(&res, "p", []byte(out), want)
		if len(res.Checks) != 1 || !res.Checks[0].OK {
			t.Errorf("checks = %+v", res.Checks)
		}
	})
	t.Run("where the state came from", func(t *testing.T) {
		for _, c := range []struct {
			out, want string
			ok        bool
		}{
			{`[{"stateFrom":"snapshot"}]`, stateSnapshot, true},
			{`[{"stateFrom":"scan"}]`, stateSnapshot, false},
			{`[{}]`, stateScan, true}, // a binary that does not say yet
			{`[]`, stateScan, false},
		} {
			var res storeResult
			checkStateFrom(&res, "from", []byte(c.out), c.want)
			if len(res.Checks) != 1 || res.Checks[0].OK != c.ok {
				t.Errorf("%s, want %s: checks = %+v", c.out, c.want, res.Checks)
			}
		}
	})
	t.Run("the snapshot's plan against the scan's", func(t *testing.T) {
		scan := `[{"stats":{"rows":3},"changed":[{"externalId":"E2"}],"departed":["E9"],"unchanged":1,"calls":[{"externalIds":["E3"]}],"stateFrom":"scan"}]`
		same := strings.Replace(scan, `"scan"`, `"snapshot"`, 1)
		other := strings.Replace(same, `"E9"`, `"E8"`, 1)
		for out, ok := range map[string]bool{same: true, other: false, `[]`: false} {
			var res storeResult
			samePlans(&res, []byte(scan), []byte(out))
			if len(res.Checks) != 1 || res.Checks[0].OK != ok {
				t.Errorf("%s: checks = %+v", out, res.Checks)
			}
		}
	})
	for name, out := range map[string]string{
		"an extra call":    `[{"stats":{"rows":3},"changed":[{}],"unchanged":1,"calls":[{"externalIds":["E3"]},{"externalIds":["E4"]}]}]`,
		"a safeguard trip": `[{"stats":{"rows":3},"changed":[{}],"unchanged":1,"calls":[{"externalIds":["E3"]}],"safeguards":[{"name":"maxDepartedRatio"}]}]`,
		"no plan":          `[]`,
		"not json":         `tenant bench`,
	} {
		t.Run(name, func(t *testing.T) {
			var res storeResult
			checkPlan(&res, "p", []byte(out), want)
			if len(res.Checks) != 1 || res.Checks[0].OK {
				t.Errorf("checks = %+v", res.Checks)
			}
		})
	}
}

func TestBaselineChild(t *testing.T) {
	dir := t.TempDir()
	prev, next := filepath.Join(dir, "prev.csv"), filepath.Join(dir, "next.csv")
	if err := os.WriteFile(prev, []byte("id,x\n1,a\n2,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(next, []byte("id,x\n1,a\n2,c\n3,d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("prints the counts", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if code := mainCode(context.Background(), []string{baselineArg, prev, next}, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var got baseline.Result
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if want := (baseline.Result{Previous: 2, Rows: 3, New: 1, Changed: 1, Unchanged: 1}); got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if code := mainCode(context.Background(), []string{baselineArg, prev, filepath.Join(dir, "none.csv")}, &out, &errOut); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
	t.Run("usage", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if code := mainCode(context.Background(), []string{baselineArg, prev}, &out, &errOut); code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
}

// TestRun runs the whole harness, small, on both stores with the real
// binary: it builds hrsync, seeds, plans, reruns and checks.
func TestRun(t *testing.T) {
	pg := os.Getenv(pgEnv)
	if pg == "" {
		t.Fatalf("the harness test needs PostgreSQL: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", pgEnv)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var schemas []string
	o := options{onSchema: func(s string) { schemas = append(schemas, s) }, Rows: 3000, Repeat: 2, Stores: []string{storeSQLite, storePostgres}, PostgresURL: pg,
		WorkDir: t.TempDir(), ProfileDir: t.TempDir(), ImportRunRows: 1000, self: self}
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	t.Run("table for each store", func(t *testing.T) {
		for _, want := range []string{"store  ", "\nsqlite    scan      3000  ", "\nsqlite    snapshot  3000  ",
			"\npostgres  scan      3000  ", "\npostgres  snapshot  3000  ", "medians of 2 runs", "\nsqlite: scan ", "\npostgres: scan ",
			"\nsqlite: run people with no change, snapshot current: ", "x the snapshot plan's wall",
			"\npostgres: snapshot plan at GOMAXPROCS=1 ", ": wall(2)/wall(1) = ", "the target (<= 0.60)",
			"\nsqlite: first import plan (3015 new people, empty state): ", "the target (peak <= 300 MiB)",
			"\npostgres: first import run of 1000 rows (emulated API): "} {
			if !strings.Contains(text, want) {
				t.Errorf("output lacks %q:\n%s", want, text)
			}
		}
	})
	t.Run("every check passes", func(t *testing.T) {
		if strings.Contains(text, "FAIL") {
			t.Errorf("a check failed:\n%s", text)
		}
		for _, store := range []string{storeSQLite, storePostgres} {
			for _, c := range []string{"plan (scan) finds the generated diff", "baseline finds the generated diff", "plan with no change",
				"run people with no change makes no API call: 0 requests", "no person row written",
				"run people saved a valid state snapshot: snapshot valid at the current version: true",
				"plan (snapshot) finds the generated diff", "plan from the snapshot equals the plan from the scan",
				"plan (scan) says where its state came from", "plan (snapshot) says where its state came from",
				"run people with no change, snapshot current (1), makes no API call: 0 requests",
				"run people with no change, snapshot current (2), makes no API call: 0 requests",
				"snapshot plan at GOMAXPROCS=1 finds the generated diff", "snapshot plan at GOMAXPROCS=2 finds the generated diff",
				"first import plan: every row new: rows 3015, unchanged 0, changed 0, new 3015 in 31 calls",
				"first import run creates every person: 1000 people in state, 10 API requests",
				"first import run's JSON report names every person added: 1000 people added in the report"} {
				if !strings.Contains(text, "ok   "+store+": "+c) {
					t.Errorf("no passing check %q for %s:\n%s", c, store, text)
				}
			}
		}
	})
	t.Run("profiles written", func(t *testing.T) {
		for _, f := range []string{"sqlite/cpu.pprof", "sqlite/heap.pprof", "postgres/cpu.pprof", "postgres/heap.pprof"} {
			if fi, err := os.Stat(filepath.Join(o.ProfileDir, f)); err != nil || fi.Size() == 0 {
				t.Errorf("profile %s: %v", f, err)
			}
		}
	})
	t.Run("schema dropped", func(t *testing.T) {
		if len(schemas) != 3 {
			t.Fatalf("schemas = %q, want three (the state, the first import's plans, its run)", schemas)
		}
		db, err := sql.Open("postgres", pg)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = db.Close() }()
		for _, schema := range schemas {
			var n int
			if err := db.QueryRow("SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("schema %s is still there", schema)
			}
		}
	})
}

func TestRunWithoutPostgres(t *testing.T) {
	o := options{Rows: 10, Repeat: 1, Stores: []string{storePostgres}, WorkDir: t.TempDir(), Hrsync: "/nonexistent", self: "/nonexistent"}
	err := run(context.Background(), o, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), pgEnv) {
		t.Errorf("err = %v, want one naming %s", err, pgEnv)
	}
}
