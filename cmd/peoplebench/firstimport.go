package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"hrsync/emulator"
	"hrsync/internal/bench/gen"
	"hrsync/internal/bench/proc"
	"hrsync/store"
)

// Targets of issue 22 for the steps it added.
const (
	// targetImportPeakMiB is the most a first import's plan (and run) may
	// hold at its peak.
	targetImportPeakMiB = 300.0
	// targetProcsRatio is the most the snapshot plan's wall time with
	// GOMAXPROCS=2 may be over its wall time with GOMAXPROCS=1.
	targetProcsRatio = 0.60
	// importRate is the api.ratePerSecond of the first-import run, so high
	// that the client's rate limit does not bound it.
	importRate = 100000
	// importToken is the loopback emulator's token.
	importToken = "bench-import-token"
)

// measureImport measures the first import on a store: o.Repeat plans of
// next.csv against an empty state, every row new; then, unless
// o.ImportRunRows is 0, one `hrsync run people` of its first rows against
// an emulator of the API (measureImportRun).
func measureImport(ctx context.Context, o options, dir string, f files, res *storeResult, w io.Writer) (err error) {
	name := res.Store
	t, err := emptyTarget(ctx, o, dir, name, "-import")
	if err != nil {
		return err
	}
	defer func() {
		if derr := t.drop(); derr != nil && err == nil {
			err = derr
		}
	}()
	cfg, _, err := writeConfig(filepath.Join(dir, name+"-import"), t.schema)
	if err != nil {
		return err
	}
	env := childEnv(map[string]string{"HRSYNC_STORE_URL": t.dsn, "HRSYNC_LOG_FORMAT": "json", "HRSYNC_LOG_LEVEL": "warn"})
	every := gen.Counts{Rows: f.expect.Rows, New: f.expect.Rows}
	res.ImportRows = f.expect.Rows
	for i := range o.Repeat {
		m, err := proc.Run(ctx, o.self, env, o.Hrsync, "plan", "--config", cfg, "--json", f.next)
		if err != nil {
			return fmt.Errorf("first import plan: %w", err)
		}
		if i == 0 {
			checkPlan(res, "first import plan: every row new", m.Stdout, every)
		}
		m.Stdout = nil // a million new people: not held for the report
		res.Import = append(res.Import, m)
		fmt.Fprintf(w, "%s: first import plan run %d: %.2fs %.0f MiB\n", name, i+1, m.Wall.Seconds(), m.PeakMiB())
	}
	if o.ImportRunRows == 0 {
		return nil
	}
	return measureImportRun(ctx, o, dir, f, res, w)
}

// measureImportRun runs people once on the first o.ImportRunRows rows of
// next.csv against an empty state and a loopback emulator of the API, and
// checks that every person was created, in as many calls as batches.
func measureImportRun(ctx context.Context, o options, dir string, f files, res *storeResult, w io.Writer) (err error) {
	name := res.Store
	n := min(o.ImportRunRows, f.expect.Rows)
	file := filepath.Join(dir, fmt.Sprintf("import-%d.csv", n))
	if err := writeHead(f.next, file, n); err != nil {
		return err
	}
	t, err := emptyTarget(ctx, o, dir, name, "-import-run")
	if err != nil {
		return err
	}
	defer func() {
		if derr := t.drop(); derr != nil && err == nil {
			err = derr
		}
	}()
	emu, err := emulator.New(emulator.Options{Tokens: map[string][]string{importToken: nil}, Seed: 1, PersonalizeDelay: &emulator.DelayRange{}})
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	var requests atomic.Int64
	url, stop, err := serveLoopback(ctx, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		emu.ServeHTTP(rw, r)
	}))
	if err != nil {
		return err
	}
	defer stop()
	api := fmt.Sprintf("api:\n  baseUrl: %q\n  ratePerSecond: %d\n  burst: 100\n  maxConcurrency: 8\n", url, importRate)
	cfg, drop, err := writeConfigAPI(filepath.Join(dir, name+"-import-run"), t.schema, api, emulator.DatasetCompanyID, emulator.PlainCollectionID)
	if err != nil {
		return err
	}
	if err := dropExport(file, drop); err != nil {
		return err
	}
	env := childEnv(map[string]string{"HRSYNC_STORE_URL": t.dsn, "HRSYNC_LOG_FORMAT": "json", "HRSYNC_LOG_LEVEL": "warn",
		"HRSYNC_API_TOKEN": importToken})
	m, err := proc.Run(ctx, o.self, env, o.Hrsync, "run", "people", "--config", cfg)
	if err != nil {
		return fmt.Errorf("first import run: %w", err)
	}
	m.Stdout = nil
	res.ImportRun, res.ImportRunRows = &m, n
	sum, err := checksum(ctx, t)
	if err != nil {
		return err
	}
	calls := (n + 99) / 100 // the configuration's batchSize
	res.check("first import run creates every person", sum.Rows == n && requests.Load() == int64(calls),
		"%d people in state, %d API requests (want %d people, %d createPeople calls)", sum.Rows, requests.Load(), n, calls)
	added, err := reportedAdded(filepath.Join(drop, "processed", filepath.Base(file)+".report.json"))
	res.check("first import run's JSON report names every person added", err == nil && added == n,
		"%d people added in the report (%v), want %d", added, err, n)
	fmt.Fprintf(w, "%s: first import run of %d rows: %.2fs %.0f MiB, %d API requests\n", name, n, m.Wall.Seconds(), m.PeakMiB(), requests.Load())
	return nil
}

// reportedAdded counts the people the JSON report beside an archived
// export lists as added.
func reportedAdded(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open the JSON report: %w", err)
	}
	defer f.Close()
	var report struct {
		People struct {
			Added []struct {
				ExternalID string `json:"externalId"`
			} `json:"added"`
		} `json:"people"`
	}
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&report); err != nil {
		return 0, fmt.Errorf("read the JSON report: %w", err)
	}
	return len(report.People.Added), nil
}

// measureProcs measures the snapshot plan o.Repeat times at GOMAXPROCS=1
// and at GOMAXPROCS=2, alternately, and checks the first plan of each.
func measureProcs(ctx context.Context, o options, env []string, cfg string, f files, res *storeResult, w io.Writer) error {
	for i := range o.Repeat {
		for p, procs := range []int{1, 2} {
			m, err := proc.Run(ctx, o.self, append(env[:len(env):len(env)], fmt.Sprintf("GOMAXPROCS=%d", procs)),
				o.Hrsync, "plan", "--config", cfg, "--json", f.next)
			if err != nil {
				return fmt.Errorf("plan at GOMAXPROCS=%d: %w", procs, err)
			}
			if i == 0 {
				checkPlan(res, fmt.Sprintf("snapshot plan at GOMAXPROCS=%d finds the generated diff", procs), m.Stdout, f.expect)
			}
			m.Stdout = nil
			res.Procs[p] = append(res.Procs[p], m)
			fmt.Fprintf(w, "%s: snapshot plan at GOMAXPROCS=%d, run %d: %.2fs %.0f MiB\n", res.Store, procs, i+1, m.Wall.Seconds(), m.PeakMiB())
		}
	}
	return nil
}

// migrateEmpty makes the schema of an empty state.
func migrateEmpty(ctx context.Context, t target) error {
	st, err := store.Open(ctx, t.dsn, store.Options{Schema: t.schema, Migrate: true})
	if err != nil {
		return fmt.Errorf("open empty store: %w", err)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("close empty store: %w", err)
	}
	return nil
}

// emptyTarget makes a fresh target of the store name (newTarget) and
// migrates it, empty; the caller drops it. A target that cannot be
// migrated is dropped here.
func emptyTarget(ctx context.Context, o options, dir, name, suffix string) (target, error) {
	t, err := newTarget(o, dir, name, suffix) //nolint:contextcheck // its cleanup bounds itself (see newTarget)
	if err != nil {
		return target{}, err
	}
	if err := migrateEmpty(ctx, t); err != nil {
		return target{}, errors.Join(err, t.drop())
	}
	return t, nil
}

// writeHead writes the header and the first n rows of the export src to
// dst (the generator's rows are one line each).
func writeHead(src, dst string, n int) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("read export: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fileMode)
	if err != nil {
		return fmt.Errorf("create export: %w", err)
	}
	r, bw := bufio.NewReader(in), bufio.NewWriter(out)
	for range n + 1 {
		line, rerr := r.ReadBytes('\n')
		if _, err := bw.Write(line); err != nil {
			rerr = err
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				break
			}
			_ = out.Close()
			return fmt.Errorf("write %s: %w", filepath.Base(dst), rerr)
		}
	}
	if err := errors.Join(bw.Flush(), out.Close()); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(dst), err)
	}
	return nil
}

// dropExport links the export into the drop folder, with its marker.
func dropExport(file, drop string) error {
	dst := filepath.Join(drop, filepath.Base(file))
	if err := os.Link(file, dst); err != nil {
		return fmt.Errorf("drop export: %w", err)
	}
	if err := os.WriteFile(dst+".done", nil, fileMode); err != nil {
		return fmt.Errorf("drop marker: %w", err)
	}
	return nil
}

// serveLoopback serves h on a loopback port; stop shuts it down.
func serveLoopback(ctx context.Context, h http.Handler) (url string, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stop = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "peoplebench: loopback API:", err)
		}
	}
	return "http://" + ln.Addr().String(), stop, nil
}
