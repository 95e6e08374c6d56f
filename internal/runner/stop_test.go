package runner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"hrsync/internal/metrics"
	"hrsync/internal/metrics/metricstest"
	"hrsync/model"
	"hrsync/store"
)

// TestCutShort: a cycle that ends with an error because its context was
// cancelled (its process is stopping) is interrupted, in its result and in
// hrsync_runs_total, whatever outcome the job gave; a safeguard stands, and
// a cycle that ended on its own is not touched.
func TestCutShort(t *testing.T) {
	m := metrics.New()
	reg := NewRegistry()
	stopped := func(ctx context.Context) error { return fmt.Errorf("stage order_line_items: %w", ctx.Err()) }
	funcs := map[string]Func{
		"failed": func(ctx context.Context) (Result, error) {
			return Result{Outcome: model.OutcomeFailed}, stopped(ctx)
		},
		"unsaid": func(ctx context.Context) (Result, error) { return Result{}, stopped(ctx) },
		"attention": func(ctx context.Context) (Result, error) {
			return Result{Outcome: model.OutcomeAttention}, stopped(ctx)
		},
		"safeguard": func(ctx context.Context) (Result, error) {
			return Result{Outcome: model.OutcomeSafeguard}, errors.New("safeguard: too many departures")
		},
		"done": func(context.Context) (Result, error) { return Result{Outcome: model.OutcomeOK}, nil },
	}
	for tenant, fn := range funcs {
		if err := reg.Register(model.JobOrders, tenant, fn); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(Options{Registry: reg, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	want := map[string]model.RunOutcome{"failed": model.OutcomeInterrupted, "unsaid": model.OutcomeInterrupted,
		"attention": model.OutcomeInterrupted, "safeguard": model.OutcomeSafeguard, "done": model.OutcomeOK}
	for tenant, outcome := range want {
		res, _ := r.RunOnce(ctx, Key{Job: model.JobOrders, Tenant: tenant})
		if res.Outcome != outcome {
			t.Errorf("%s: outcome %s, want %s", tenant, res.Outcome, outcome)
		}
		if outcome == model.OutcomeInterrupted && (res.Cause != interruptedCause || res.Next != interruptedNext) {
			t.Errorf("%s: cause %q, next %q; want the words of a cycle cut short", tenant, res.Cause, res.Next)
		}
		if v, _ := metricstest.Value(t, m.Registry(), "hrsync_runs_total",
			map[string]string{"tenant": tenant, "outcome": string(outcome)}); v != 1 {
			t.Errorf("%s: hrsync_runs_total{outcome=%s} = %v, want 1", tenant, outcome, v)
		}
	}
	if got := CutShort(t.Context(), model.OutcomeFailed); got != model.OutcomeFailed {
		t.Errorf("a run that failed with a live context is %s, want failed", got)
	}
	err = Cut(context.Canceled)
	if err.Error() != ErrCut.Error() || !errors.Is(err, ErrCut) || !errors.Is(err, context.Canceled) {
		t.Errorf("Cut(context.Canceled) = %q: want ErrCut's words, wrapping both", err)
	}
}

// TestCloseInterruptedAtStart: as a process starts, the runs its registered
// jobs left running are closed as interrupted, but for a job whose lock
// another run holds (a live replica) and for jobs it does not run.
func TestCloseInterruptedAtStart(t *testing.T) {
	st := openStore(t)
	ok := func(context.Context) (Result, error) { return Result{}, nil }
	reg := NewRegistry()
	for _, k := range []Key{{model.JobOrders, "acme"}, {model.JobGrants, "acme"}, {model.JobPeople, "acme"}} {
		if err := reg.Register(k.Job, k.Tenant, ok); err != nil {
			t.Fatal(err)
		}
	}
	for id, k := range map[string]Key{"dead-orders": {model.JobOrders, "acme"}, "dead-grants": {model.JobGrants, "acme"},
		"live-people": {model.JobPeople, "acme"}, "not-ours": {model.JobOrders, "globex"}} {
		if err := st.StartRun(t.Context(), store.Run{ID: id, Job: k.Job, Tenant: k.Tenant}); err != nil {
			t.Fatal(err)
		}
	}
	live, err := LockJob(t.Context(), st, model.JobPeople, "acme", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer live()
	// The lock closed the people run recorded before it; record the live one.
	if err := st.StartRun(t.Context(), store.Run{ID: "live-people-2", Job: model.JobPeople, Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.CloseInterrupted(t.Context(), st)
	if err != nil || n != 2 {
		t.Fatalf("closed %d runs (%v), want 2", n, err)
	}
	runs, err := st.LastRuns(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]model.RunOutcome{"dead-orders": model.OutcomeInterrupted, "dead-grants": model.OutcomeInterrupted,
		"live-people": model.OutcomeInterrupted, "live-people-2": model.OutcomeRunning, "not-ours": model.OutcomeRunning}
	for _, run := range runs {
		if run.Outcome != want[run.ID] {
			t.Errorf("run %s is %s, want %s", run.ID, run.Outcome, want[run.ID])
		}
	}
}
