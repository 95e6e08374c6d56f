package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"hrsync/internal/metrics"
	"hrsync/model"
	"hrsync/store"
)

// openStore opens a fresh SQLite store in the test's folder.
func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestRegistry(t *testing.T) {
	ok := func(context.Context) (Result, error) { return Result{}, nil }
	t.Run("keys in order and lookup", func(t *testing.T) {
		r := NewRegistry()
		for _, k := range []Key{{model.JobPeople, "b"}, {model.JobPeople, "a"}, {model.JobOrders, "a"}} {
			if err := r.Register(k.Job, k.Tenant, ok); err != nil {
				t.Fatal(err)
			}
		}
		want := "people/b people/a orders/a"
		var got []string
		for _, k := range r.Keys() {
			got = append(got, k.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("keys %v, want %s", got, want)
		}
		if _, found := r.Lookup(Key{model.JobPersonalize, "a"}); found {
			t.Error("an unregistered job was found")
		}
	})
	t.Run("refuses duplicates and blanks", func(t *testing.T) {
		r := NewRegistry()
		if err := r.Register(model.JobPeople, "a", ok); err != nil {
			t.Fatal(err)
		}
		if err := r.Register(model.JobPeople, "a", ok); err == nil {
			t.Error("a job registered twice for one tenant")
		}
		if err := r.Register(model.JobPeople, "", ok); err == nil {
			t.Error("a job registered without a tenant")
		}
		if err := r.Register(model.JobPeople, "b", nil); err == nil {
			t.Error("a nil func registered")
		}
	})
}

func TestRunOnce(t *testing.T) {
	st := openStore(t)
	m := metrics.New()
	reg := NewRegistry()
	var gotCtx context.Context
	held := 3
	funcs := map[string]Func{
		"ok": func(ctx context.Context) (Result, error) {
			gotCtx = ctx
			return Result{Counts: map[string]int{metrics.CountCreated: 2}, GrantsHeld: &held,
				RuleGrants: []metrics.RuleGrants{{Rule: "birthday", Applied: 5, Held: 1, Skipped: 2}}}, nil
		},
		"attention": func(context.Context) (Result, error) { return Result{Outcome: model.OutcomeAttention}, nil },
		"error": func(context.Context) (Result, error) {
			return Result{Outcome: model.OutcomeOK}, errors.New("source unreadable")
		},
		"safeguard": func(context.Context) (Result, error) { return Result{Outcome: model.OutcomeSafeguard}, nil },
		"locked": func(context.Context) (Result, error) {
			return Result{}, fmt.Errorf("lock people sync of locked: %w", model.ErrLocked)
		},
		"panic": func(context.Context) (Result, error) { panic("boom") },
	}
	for name, fn := range funcs {
		if err := reg.Register(model.JobPeople, name, fn); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(Options{Registry: reg, Recorder: st, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, tenant string) (Result, error) {
		t.Helper()
		return r.RunOnce(t.Context(), Key{model.JobPeople, tenant})
	}
	counter := func(t *testing.T, name, tenant, outcome string) float64 {
		t.Helper()
		families, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, s := range f.GetMetric() {
				match := 0
				for _, l := range s.GetLabel() {
					if (l.GetName() == "tenant" && l.GetValue() == tenant) || (l.GetName() == "outcome" && l.GetValue() == outcome) {
						match++
					}
				}
				if (outcome == "" && match == 1) || match == 2 {
					if s.Counter != nil {
						return s.Counter.GetValue()
					}
					return s.Gauge.GetValue()
				}
			}
		}
		return 0
	}

	t.Run("ok by default, context passed, metrics fed", func(t *testing.T) {
		res, err := run(t, "ok")
		if err != nil || res.Outcome != model.OutcomeOK {
			t.Fatalf("outcome %q, err %v", res.Outcome, err)
		}
		if gotCtx == nil || gotCtx.Done() == nil {
			t.Error("the job did not get the caller's context")
		}
		if v := counter(t, "hrsync_runs_total", "ok", "ok"); v != 1 {
			t.Errorf("runs ok = %v", v)
		}
		if v := counter(t, "hrsync_people_created_total", "ok", ""); v != 2 {
			t.Errorf("people created = %v", v)
		}
		if v := counter(t, "hrsync_grants_held", "ok", ""); v != 3 {
			t.Errorf("grants held = %v", v)
		}
		for result, want := range map[string]float64{"applied": 5, "held": 1, "skipped": 2} {
			if v := ruleGrants(t, m, "ok", "birthday", result); v != want {
				t.Errorf("rule grants %s = %v, want %v", result, v, want)
			}
		}
	})
	t.Run("an error fails an ok outcome", func(t *testing.T) {
		res, err := run(t, "error")
		if err == nil || res.Outcome != model.OutcomeFailed {
			t.Errorf("outcome %q, err %v", res.Outcome, err)
		}
	})
	t.Run("attention and safeguard kept", func(t *testing.T) {
		if res, _ := run(t, "attention"); res.Outcome != model.OutcomeAttention {
			t.Errorf("outcome %q", res.Outcome)
		}
		if res, _ := run(t, "safeguard"); res.Outcome != model.OutcomeSafeguard {
			t.Errorf("outcome %q", res.Outcome)
		}
	})
	t.Run("a held lock is the locked outcome", func(t *testing.T) {
		res, err := run(t, "locked")
		if !errors.Is(err, model.ErrLocked) || res.Outcome != model.OutcomeLocked {
			t.Errorf("outcome %q, err %v", res.Outcome, err)
		}
		if v := counter(t, "hrsync_runs_total", "locked", "locked"); v != 1 {
			t.Errorf("runs locked = %v", v)
		}
	})
	t.Run("a panic is recovered and recorded as a failed run", func(t *testing.T) {
		res, err := run(t, "panic")
		if !errors.Is(err, ErrPanic) || res.Outcome != model.OutcomeFailed {
			t.Fatalf("outcome %q, err %v", res.Outcome, err)
		}
		runs, err := st.LastRuns(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Tenant != "panic" || runs[0].Outcome != model.OutcomeFailed || !strings.Contains(runs[0].Error, "boom") {
			t.Errorf("recorded runs %+v, want one failed run of tenant panic saying boom", runs)
		}
		if v := counter(t, "hrsync_run_panics_total", "panic", ""); v != 1 {
			t.Errorf("panics = %v", v)
		}
		if v := counter(t, "hrsync_runs_in_progress", "panic", ""); v != 0 {
			t.Errorf("in progress after a panic = %v", v)
		}
	})
	t.Run("unknown job", func(t *testing.T) {
		_, err := r.RunOnce(t.Context(), Key{model.JobOrders, "ok"})
		if !errors.Is(err, ErrUnknownJob) {
			t.Errorf("err %v, want ErrUnknownJob", err)
		}
	})
}

func TestWorst(t *testing.T) {
	order := []model.RunOutcome{model.OutcomeOK, model.OutcomeAttention, model.OutcomeLocked, model.OutcomeSafeguard, model.OutcomeFailed}
	for i, better := range order {
		for _, worse := range order[i:] {
			t.Run(fmt.Sprintf("%s-%s", better, worse), func(t *testing.T) {
				if got := Worst(better, worse); got != worse {
					t.Errorf("Worst(%s, %s) = %s", better, worse, got)
				}
				if got := Worst(worse, better); got != worse {
					t.Errorf("Worst(%s, %s) = %s", worse, better, got)
				}
			})
		}
	}
}

func TestProgress(t *testing.T) {
	t.Run("a line every interval off a terminal, and the last step", func(t *testing.T) {
		var buf bytes.Buffer
		p := NewProgress(&buf, false, 5*time.Second)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return now }
		report := p.Func("people acme")
		report(25, 100) // first: printed
		now = now.Add(time.Second)
		report(50, 100) // within the interval: not printed
		now = now.Add(5 * time.Second)
		report(75, 100) // printed
		report(100, 100)
		want := "people acme: 25/100 (25%)\npeople acme: 75/100 (75%)\npeople acme: 100/100 (100%)\n"
		if buf.String() != want {
			t.Errorf("printed %q, want %q", buf.String(), want)
		}
	})
	t.Run("off a terminal with a logger, JSON log lines", func(t *testing.T) {
		var buf bytes.Buffer
		enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
		p := NewLogProgress(zap.New(zapcore.NewCore(enc, zapcore.AddSync(&buf), zap.InfoLevel)), 5*time.Second)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return now }
		p.Report("people acme: new people created", 10, 40)
		now = now.Add(time.Second)
		p.Report("people acme: new people created", 20, 40) // within the interval
		p.Report("people acme: new people created", 40, 40) // the last step
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("wrote %d lines, want 2:\n%s", len(lines), buf.String())
		}
		for i, want := range []int{10, 40} {
			var l struct {
				Msg   string `json:"msg"`
				Of    string `json:"of"`
				Done  int    `json:"done"`
				Total int    `json:"total"`
			}
			if err := json.Unmarshal([]byte(lines[i]), &l); err != nil {
				t.Fatalf("line %d is not JSON: %v: %s", i, err, lines[i])
			}
			if l.Msg != "progress" || l.Done != want || l.Total != 40 || l.Of != "people acme: new people created" {
				t.Errorf("line %d = %+v", i, l)
			}
		}
	})
	t.Run("a terminal line is redrawn and ended", func(t *testing.T) {
		var buf bytes.Buffer
		p := NewProgress(&buf, true, 0)
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return now }
		p.Report("x", 1, 4)
		now = now.Add(time.Second)
		p.Report("x", 2, 4)
		p.End()
		out := buf.String()
		if strings.Count(out, "\r") != 2 || !strings.HasSuffix(out, "x: 2/4 (50%)\n") {
			t.Errorf("printed %q", out)
		}
	})
}

// ruleGrants reads hrsync_rule_grants_total{job,tenant,rule,result} of any job.
func ruleGrants(t *testing.T, m *metrics.Metrics, tenant, rule, result string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "hrsync_rule_grants_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["tenant"] == tenant && labels["rule"] == rule && labels["result"] == result {
				return s.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// notifierFunc is a Notifier made of a function.
type notifierFunc func(ctx context.Context, k Key, res Result, err error)

func (f notifierFunc) Notify(ctx context.Context, k Key, res Result, err error) { f(ctx, k, res, err) }

// TestNotifierFollowsTheOutcome: the notifier hears of every cycle with the
// outcome the runner settled on (a panic is failed, a held lock locked),
// after the job ended.
func TestNotifierFollowsTheOutcome(t *testing.T) {
	reg := NewRegistry()
	jobs := map[string]Func{
		"attention": func(context.Context) (Result, error) {
			return Result{Outcome: model.OutcomeAttention, Cause: "2 rows rejected", Counts: map[string]int{"rejected": 2}}, nil
		},
		"panics": func(context.Context) (Result, error) { panic("boom") },
		"locked": func(context.Context) (Result, error) { return Result{}, fmt.Errorf("lock: %w", model.ErrLocked) },
		"errors": func(context.Context) (Result, error) {
			return Result{Outcome: model.OutcomeOK, Cause: "no export ready"}, errors.New("source down")
		},
	}
	for tenant, fn := range jobs {
		if err := reg.Register(model.JobPeople, tenant, fn); err != nil {
			t.Fatal(err)
		}
	}
	heard := map[string]model.RunOutcome{}
	var causes []string
	r, err := New(Options{Registry: reg, Recorder: openStore(t), Notifier: notifierFunc(func(_ context.Context, k Key, res Result, err error) {
		heard[k.Tenant] = res.Outcome
		causes = append(causes, res.Cause)
		if k.Tenant == "errors" && err == nil {
			t.Error("the job's error did not reach the notifier")
		}
	})})
	if err != nil {
		t.Fatal(err)
	}
	for tenant := range jobs {
		k := Key{model.JobPeople, tenant}
		res, err := r.RunOnce(t.Context(), k)
		if tenant != "errors" {
			continue
		}
		// The job meant ok, but its error failed the cycle: the last line
		// says the error, never the words of the outcome the job meant.
		if _, line := LastLine([]End{{Key: k, Res: res, Err: err}}); line != "failed: people errors: source down; see the logs" {
			t.Errorf("last line of a job that failed with words for ok: %q", line)
		}
	}
	want := map[string]model.RunOutcome{"attention": model.OutcomeAttention, "panics": model.OutcomeFailed,
		"locked": model.OutcomeLocked, "errors": model.OutcomeFailed}
	for tenant, o := range want {
		if heard[tenant] != o {
			t.Errorf("notifier heard %s: %q, want %q", tenant, heard[tenant], o)
		}
	}
	if !strings.Contains(strings.Join(causes, "|"), "2 rows rejected") {
		t.Errorf("the job's cause did not reach the notifier: %q", causes)
	}
}

// The real store records runs (checked at compile time).
var _ Recorder = (*store.Store)(nil)
