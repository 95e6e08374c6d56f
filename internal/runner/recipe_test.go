package runner_test

// The recipe of docs/architecture.md ("Recipe: a new job"), proven: a
// test-only job registers its kind with one RegisterKind call and runs
// through RegisterKinds and RunOnce, the path every real job takes, with
// its outcome, metrics, printed report, last line and run record: the
// runs table admits any job's name (migration 00011), so a new job needs
// no migration to record its runs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/uuid"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/metrics/metricstest"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
)

// jobTally is the test-only job: it counts a tenant's configured grant
// rules, records its run, and needs attention when a tenant has none.
const jobTally model.Job = "tally"

// The job's one registration line (in a real job package, its init).
func init() {
	runner.RegisterKind(runner.Kind{Job: jobTally, Order: 90, Short: "Count the grant rules (test only)",
		Schedule: func(t config.Tenant) string { return t.Schedules.Grants }, Cycle: tallyCycle})
}

// tallyOptions are the job's options, mapped from a tenant's
// configuration once, in the job's own package.
type tallyOptions struct {
	Tenant string
	Rules  int
}

func tallyOptionsFor(t config.Tenant) tallyOptions {
	return tallyOptions{Tenant: t.Name, Rules: len(t.Grants.Rules)}
}

// tallyReport is the job's report, printed as text by its cycle.
type tallyReport struct {
	RunID string `json:"runId"`
	Rules int    `json:"rules"`
}

// tallyCycle is one cycle: the run recorded in the store, the report
// printed to env.Out, the outcome and counts handed to the runner.
func tallyCycle(env runner.Env, t config.Tenant) runner.Func {
	opts := tallyOptionsFor(t)
	return func(ctx context.Context) (runner.Result, error) {
		rep := &tallyReport{RunID: uuid.NewString(), Rules: opts.Rules}
		if env.Store != nil {
			if err := env.Store.StartRun(ctx, store.Run{ID: rep.RunID, Job: jobTally, Tenant: opts.Tenant}); err != nil {
				return runner.Result{}, fmt.Errorf("record run start: %w", err)
			}
		}
		res := runner.Result{Outcome: model.OutcomeOK, Counts: map[string]int{"rules": rep.Rules, metrics.CountCreated: rep.Rules}, Report: rep}
		var cause error
		if rep.Rules == 0 {
			res.Outcome, res.Cause, res.Next = model.OutcomeAttention, "no grant rule", "add a rule"
			cause = errors.New(res.Cause)
		}
		if env.Store != nil {
			if err := env.Store.FinishRun(ctx, store.RunResult{ID: rep.RunID, Outcome: res.Outcome, Counts: res.Counts, Err: cause}); err != nil {
				return res, fmt.Errorf("record run outcome: %w", err)
			}
		}
		if env.Out != nil {
			printTally(env.Out, opts.Tenant, rep)
		}
		return res, nil
	}
}

func printTally(w io.Writer, tenant string, rep *tallyReport) {
	fmt.Fprintf(w, "tenant %s, tally: %d rules (run %s)\n", tenant, rep.Rules, rep.RunID)
}

func TestRecipeNewJob(t *testing.T) {
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	tenants := []config.Tenant{
		{Name: "acme", Grants: config.Grants{Rules: []config.GrantRule{{Name: "birthday"}, {Name: "anniversary"}}}},
		{Name: "globex"},
	}
	var out bytes.Buffer
	reg := runner.NewRegistry()
	if err := reg.RegisterKinds(runner.Env{Out: &out}, tenants); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	r, err := runner.New(runner.Options{Registry: reg, Recorder: st, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("registered in its order", func(t *testing.T) {
		if jobs := runner.Jobs(); !slices.Contains(jobs, jobTally) || jobs[len(jobs)-1] != jobTally {
			t.Errorf("jobs %v, want tally last (order 90)", jobs)
		}
		k, ok := runner.LookupKind(jobTally)
		if !ok || k.Schedule(tenants[0]) != "" {
			t.Errorf("kind %+v, %v", k, ok)
		}
		if _, ok := reg.Lookup(runner.Key{Job: jobTally, Tenant: "globex"}); !ok {
			t.Error("the job is not registered for every tenant")
		}
	})
	t.Run("ok: outcome, metrics, report, last line", func(t *testing.T) {
		res, err := r.RunOnce(t.Context(), runner.Key{Job: jobTally, Tenant: "acme"})
		if err != nil || res.Outcome != model.OutcomeOK || res.Counts["rules"] != 2 {
			t.Fatalf("outcome %q, counts %v, err %v", res.Outcome, res.Counts, err)
		}
		rep, ok := res.Report.(*tallyReport)
		if !ok || rep.Rules != 2 {
			t.Fatalf("report %#v", res.Report)
		}
		if v := metricValue(t, m, "hrsync_runs_total", map[string]string{"job": "tally", "tenant": "acme", "outcome": "ok"}); v != 1 {
			t.Errorf("hrsync_runs_total = %v, want 1", v)
		}
		if v := metricValue(t, m, "hrsync_people_created_total", map[string]string{"job": "tally", "tenant": "acme"}); v != 2 {
			t.Errorf("hrsync_people_created_total = %v, want 2", v)
		}
		if want := "tenant acme, tally: 2 rules (run " + rep.RunID + ")\n"; out.String() != want {
			t.Errorf("printed %q, want %q", out.String(), want)
		}
		if outcome, line := runner.LastLine([]runner.End{{Key: runner.Key{Job: jobTally, Tenant: "acme"}, Res: res}}); outcome != model.OutcomeOK ||
			line != "ok: tally acme: done: created=2 rules=2" {
			t.Errorf("last line %s %q", outcome, line)
		}
	})
	t.Run("attention: its cause is the last line's", func(t *testing.T) {
		res, err := r.RunOnce(t.Context(), runner.Key{Job: jobTally, Tenant: "globex"})
		if err != nil || res.Outcome != model.OutcomeAttention {
			t.Fatalf("outcome %q, err %v", res.Outcome, err)
		}
		if v := metricValue(t, m, "hrsync_runs_total", map[string]string{"job": "tally", "tenant": "globex", "outcome": "attention"}); v != 1 {
			t.Errorf("hrsync_runs_total = %v, want 1", v)
		}
		_, line := runner.LastLine([]runner.End{{Key: runner.Key{Job: jobTally, Tenant: "globex"}, Res: res}})
		if line != "attention: tally globex: no grant rule; add a rule" {
			t.Errorf("last line %q", line)
		}
	})

	t.Run("its run is recorded with its outcome, with no migration", func(t *testing.T) {
		reg := runner.NewRegistry()
		if err := reg.RegisterKinds(runner.Env{Store: st}, tenants[:1]); err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Options{Registry: reg, Recorder: st, Metrics: m})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.RunOnce(t.Context(), runner.Key{Job: jobTally, Tenant: "acme"})
		if err != nil || res.Outcome != model.OutcomeOK {
			t.Fatalf("outcome %q, err %v", res.Outcome, err)
		}
		rep, ok := res.Report.(*tallyReport)
		if !ok {
			t.Fatalf("report %#v", res.Report)
		}
		runs, err := st.LastRuns(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(runs, func(rec store.RunRecord) bool { return rec.ID == rep.RunID })
		if i < 0 {
			t.Fatalf("run %s not recorded; runs %+v", rep.RunID, runs)
		}
		if rec := runs[i]; rec.Job != jobTally || rec.Tenant != "acme" || rec.Outcome != model.OutcomeOK ||
			rec.FinishedAt.IsZero() || rec.Counts["rules"] != 2 {
			t.Errorf("run record %+v, want tally acme ok, finished, rules=2", rec)
		}
		if v := metricValue(t, m, "hrsync_runs_total", map[string]string{"job": "tally", "tenant": "acme", "outcome": "ok"}); v != 2 {
			t.Errorf("hrsync_runs_total ok = %v, want 2", v)
		}
	})
}

// metricValue is the value of the series of name whose labels include want.
func metricValue(t *testing.T, m *metrics.Metrics, name string, want map[string]string) float64 {
	t.Helper()
	v, _ := metricstest.Value(t, m.Registry(), name, want)
	return v
}
