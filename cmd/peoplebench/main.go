// Command peoplebench is the harness behind `make bench` (issue 3): it
// measures `hrsync plan` on a large generated export against a state of as
// many people, on SQLite and on PostgreSQL, beside a baseline measured in
// the same run, and checks that a rerun with no change plans no API call and
// writes no person row.
//
// For each store it seeds a fresh state (a temporary SQLite file, or a
// fresh PostgreSQL schema dropped at the end) with the people of the
// previous export, then runs, as child processes so that each peak memory
// is the child's own:
//
//   - the real binary: `hrsync plan --config <generated> --json next.csv`;
//   - the baseline: this program re-executed as `peoplebench baseline
//     previous.csv next.csv`, which parses both files with encoding/csv and
//     compares xxhash fingerprints in a map (package baseline).
//
// The plans are measured twice: right after seeding, when the plan scans
// the state (no snapshot yet), and after a no-change `hrsync run people`,
// which saves a snapshot of the state as every run does, so that the plan
// loads it instead. Each plan is measured beside a baseline.
//
// Once the snapshot is saved, the snapshot plan is also measured with
// GOMAXPROCS=1 and with GOMAXPROCS=2, -repeat times each, alternately (how
// the plan uses a second core: issue 22's target is wall(2)/wall(1) <= 0.60).
//
// Then a first import, on a fresh empty state of each store (a new SQLite
// file, a new PostgreSQL schema): -repeat plans of next.csv, every row new,
// their counts checked (issue 22's target: peak <= 300 MiB); and one
// `hrsync run people` of the first -import-run-rows rows of next.csv on
// another empty state, against a loopback emulator of the API (package
// emulator) with a rate limit too high to bound it, checked to create every
// person in as many createPeople calls as batches (-no-import skips both;
// -import-run-rows 0 skips the run).
//
// It prints a table of wall times, peak resident memory and their ratio,
// one line per store and state (scan, snapshot), with a verdict against the
// targets (no slower than the baseline, under 250 MiB), then per store the
// verdicts of the no-change runs, of GOMAXPROCS=2 over GOMAXPROCS=1 and of
// the first import. Figures are printed, never asserted; a failed
// correctness check fails the harness. See docs/benchmarks.md.
//
// Usage:
//
//	peoplebench [-rows 1000000] [-stores sqlite,postgres] [-repeat 3] [-hrsync bin/hrsync]
//	            [-no-import] [-import-run-rows 1000000]
//
// PostgreSQL is reached through HRSYNC_TEST_POSTGRES_URL (or -postgres).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"hrsync/internal/bench/baseline"
	"hrsync/internal/bench/proc"

	// The store dialects the harness measures register themselves.
	_ "hrsync/store/postgres"
	_ "hrsync/store/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := mainCode(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// mainCode runs the command line args and returns the exit code.
func mainCode(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == proc.LauncherArg {
		return proc.Launch(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == baselineArg {
		if err := runBaseline(ctx, args[1:], stdout); err != nil {
			fmt.Fprintln(stderr, "peoplebench baseline:", err)
			return 1
		}
		return 0
	}
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "peoplebench:", err)
		return 2
	}
	if err := run(ctx, opts, stdout); err != nil {
		fmt.Fprintln(stderr, "peoplebench:", err)
		return 1
	}
	return 0
}

// baselineArg is the first argument of the re-executed baseline child.
const baselineArg = "baseline"

// runBaseline is the baseline child: it diffs args[1] against args[0] and
// prints the counts as JSON, so that the parent can check them.
func runBaseline(ctx context.Context, args []string, w io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: peoplebench baseline PREVIOUS.csv NEXT.csv")
	}
	prev, err := os.Open(args[0])
	if err != nil {
		return fmt.Errorf("open previous: %w", err)
	}
	defer prev.Close()
	next, err := os.Open(args[1])
	if err != nil {
		return fmt.Errorf("open next: %w", err)
	}
	defer next.Close()
	res, err := baseline.Compare(ctx, prev, next)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(w).Encode(res); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return nil
}

// parseFlags reads the harness's flags.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("peoplebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var stores string
	fs.IntVar(&o.Rows, "rows", 1000000, "people in the state and rows in the export")
	fs.StringVar(&stores, "stores", "sqlite,postgres", "stores to measure, comma-separated: sqlite, postgres")
	fs.IntVar(&o.Repeat, "repeat", 3, "measurements of the plan and of the baseline per store")
	fs.StringVar(&o.Hrsync, "hrsync", "", "hrsync binary to measure (default: build ./cmd/hrsync into the work directory)")
	fs.StringVar(&o.PostgresURL, "postgres", os.Getenv(pgEnv), "PostgreSQL URL (default $"+pgEnv+"); a fresh schema is made and dropped")
	fs.StringVar(&o.WorkDir, "workdir", "", "directory for the files (default: a new temporary directory, removed at the end)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the work directory, the SQLite state and the PostgreSQL schema at the end")
	fs.BoolVar(&o.NoRunCheck, "no-run-check", false, "skip the `hrsync run people` rerun check")
	fs.BoolVar(&o.NoImport, "no-import", false, "skip the first import (its plans against an empty state, and its run)")
	fs.IntVar(&o.ImportRunRows, "import-run-rows", 1000000, "rows of the first import's `hrsync run people` against an emulator of the API, at most -rows (0: no run)")
	fs.DurationVar(&o.DropAge, "drop-age", 2500*time.Millisecond,
		"how long each export of the daily no-change runs lies in the drop folder before its run (over 2s: hashed once, as a daily export; 0: hashed twice)")
	fs.StringVar(&o.ProfileDir, "profile", "", "also build the plan in-process and write cpu.pprof and heap.pprof for each store into this directory")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, s := range strings.Split(stores, ",") {
		switch s = strings.TrimSpace(s); s {
		case storeSQLite, storePostgres:
			o.Stores = append(o.Stores, s)
		case "":
		default:
			return options{}, fmt.Errorf("-stores: unknown store %q (sqlite, postgres)", s)
		}
	}
	switch {
	case o.Rows < 1:
		return options{}, errors.New("-rows must be at least 1")
	case o.Repeat < 1:
		return options{}, errors.New("-repeat must be at least 1")
	case o.ImportRunRows < 0:
		return options{}, errors.New("-import-run-rows must be 0 or more")
	case len(o.Stores) == 0:
		return options{}, errors.New("-stores names no store")
	}
	return o, nil
}
