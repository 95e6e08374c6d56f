package main

// The jobs both `hrsync run ...` and `hrsync daemon` run, registered in one
// runner.Registry: a job plugs in with one Register line in registerJobs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/apiclient"
	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/notify"
	"hrsync/internal/runner"
	"hrsync/internal/shard"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/grants"
	"hrsync/sync/people"
)

// allJobs are the jobs in the order `run all` runs them for a tenant.
func allJobs() []model.Job {
	return []model.Job{model.JobPeople, model.JobGrants, model.JobPersonalize, model.JobOrders}
}

// jobOptions are the per-process choices of the jobs a runner holds.
type jobOptions struct {
	// out receives each run's printed report; nil prints none (daemon).
	out io.Writer
	// flags are the operator's per-run choices for the people sync.
	flags people.RunFlags
	// grantFlags are the operator's per-run choices for the grants job.
	grantFlags grants.RunFlags
	// configPath is the configuration file as the operator named it, for
	// the commands a report suggests (retry.go).
	configPath string
	// retry, when set, is the one export the people job of its tenant
	// takes back from failed/ and runs (retry.go).
	retry *retryFile
}

// jobs is a runner over the registered jobs with the store and client they share.
type jobs struct {
	st     *store.Store
	runner *runner.Runner
	reg    *runner.Registry
}

// newJobs opens the store and the API client and registers every job of
// the given tenants. The caller closes the store (jobs.st).
func (a *app) newJobs(ctx context.Context, tenants []config.Tenant, m *metrics.Metrics, opts jobOptions) (*jobs, error) {
	if m != nil {
		a.observer = m.Observer()
	}
	client, err := a.newClient()
	if err != nil {
		return nil, err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	reg := runner.NewRegistry()
	if err := a.registerJobs(reg, tenants, st, client, opts); err != nil {
		_ = st.Close()
		return nil, withCode(exitUsage, err)
	}
	notifier, err := a.newNotifier(tenants, m)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	logNotifyConfig(a.log, tenants, a.cfg)
	r, err := runner.New(runner.Options{Registry: reg, Recorder: st, Metrics: m, Logger: a.log, Notifier: notifier})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &jobs{st: st, runner: r, reg: reg}, nil
}

// registerJobs registers each job of each tenant; one line per job.
func (a *app) registerJobs(reg *runner.Registry, tenants []config.Tenant, st *store.Store, client people.Creator, opts jobOptions) error {
	for _, t := range tenants {
		if err := reg.Register(model.JobPeople, t.Name, a.peopleFunc(t, st, client, opts)); err != nil {
			return err
		}
		if err := reg.Register(model.JobGrants, t.Name, a.grantsFunc(t, st, client, opts)); err != nil {
			return err
		}
		if err := reg.Register(model.JobPersonalize, t.Name, a.personalizeFunc(t, st, client, opts)); err != nil {
			return err
		}
		if err := reg.Register(model.JobOrders, t.Name, a.ordersFunc(t, st, client, opts)); err != nil {
			return err
		}
	}
	return nil
}

// peopleFunc is one people cycle of a tenant as a runner.Func: its report
// is printed to opts.out and its counts feed the metrics.
func (a *app) peopleFunc(t config.Tenant, st *store.Store, client people.Creator, opts jobOptions) runner.Func {
	return func(ctx context.Context) (runner.Result, error) {
		job, err := a.peopleJob(t, st, client)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		feed, err := a.peopleFeed(t, opts.retry)
		if err != nil {
			return runner.Result{Outcome: model.OutcomeFailed}, err
		}
		rep, err := job.RunOnce(ctx, feed, opts.flags)
		if a.progress != nil {
			a.progress.End()
		}
		if rep == nil {
			return runner.Result{}, err
		}
		setSafeguardNextSteps(rep, opts.configPath)
		if opts.out != nil {
			printReport(opts.out, rep)
		}
		res := runner.Result{Counts: map[string]int{}, GrantsHeld: &rep.HeldGrants, Report: rep}
		res.Outcome, res.Cause, res.Next = rep.Summary()
		for _, e := range rep.Exports {
			for k, v := range e.Counts {
				res.Counts[k] += v
			}
			if e.Result != nil {
				res.Counts[metrics.CountGrantsApplied] += e.Result.Created
			}
		}
		return res, err
	}
}

// peopleProgress is the progress hook of a tenant's people sync: nil
// unless a run at a terminal (or a long run in a pod) asked for progress.
func (a *app) peopleProgress(tenant string) func(done, total int) {
	if a.progress == nil {
		return nil
	}
	return a.progress.Func("people " + tenant + ": new people created")
}

// stderrIsTerminal tells whether stderr is a terminal.
func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newRunJobCmd is `hrsync run JOB` for a job of the registry, or `run all`.
func newRunJobCmd(name, short string, jobsOf []model.Job) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := shardFlag(cmd); err != nil {
				return err
			}
			a, err := loadApp(cmd)
			if err != nil {
				return err
			}
			override, _ := cmd.Flags().GetBool("override-safeguards")
			retry, err := retryFromFlags(cmd, a)
			if err != nil {
				return err
			}
			asOf, err := parseDay(cmd)
			if err != nil {
				return err
			}
			if err := notAhead(cmd, a, asOf); err != nil {
				return err
			}
			return runCycle(cmd.Context(), a, cmd, jobsOf, jobOptions{flags: people.RunFlags{OverrideSafeguards: override},
				grantFlags: grants.RunFlags{AsOf: asOf, OverrideSafeguards: override},
				configPath: configPathOf(cmd), retry: retry})
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.Flags().Bool("override-safeguards", false, "go on although a safeguard trips (this run only)")
	if name == "people" {
		cmd.Flags().String("file", "", "take this export back from the drop folder's failed/ (failed/NAME) and run only it, once; "+
			"with --override-safeguards after a safeguard stop (needs --tenant with several tenants)")
	}
	if name == "grants" {
		cmd.Flags().String("date", "", "grant as of this past day (YYYY-MM-DD, in the rules' time zone) instead of today: "+
			"the occurrences of that day and of the look-back before it that no run granted")
	}
	return cmd
}

// runCycle runs one cycle of each job for each tenant through the runner,
// the same code path as the daemon's scheduled callback, prints the
// reports, pushes the metrics when metrics.pushgateway is set, writes the last line (the worst outcome, its cause and the next
// step) and returns an error carrying the exit code of the worst outcome:
// failed 1, safeguard 3, lock held 5, attention 4, else 0.
func runCycle(ctx context.Context, a *app, cmd *cobra.Command, jobList []model.Job, opts jobOptions) error {
	format, err := outputFormat(cmd)
	if err != nil {
		return err
	}
	asJSON := format == outputJSON
	sh, err := shardFlag(cmd)
	if err != nil {
		return err
	}
	tenants, err := a.tenants(cmd)
	if err != nil {
		return err
	}
	tenants = shardTenants(sh, tenants)
	if len(tenants) == 0 {
		return emptyShard(ctx, cmd, sh, asJSON)
	}
	if stderrIsTerminal() {
		a.progress = runner.NewProgress(cmd.ErrOrStderr(), true, 0)
	} else {
		a.progress = runner.NewLogProgress(a.log, 0)
	}
	opts.out = cmd.OutOrStdout()
	if asJSON {
		opts.out = nil // one JSON document at the end instead
	}
	var m *metrics.Metrics
	if a.cfg.Metrics.Pushgateway.Value() != "" {
		m = newMetrics(tenants)
	}
	j, err := a.newJobs(ctx, tenants, m, opts)
	if err != nil {
		return err
	}
	defer j.st.Close() //nolint:errcheck // every outcome is committed
	if m != nil {
		a.seedMetrics(ctx, m, j.st, tenants)
		a.watchGauges(m, tenants, j.st) // read once, when the run pushes
	}
	keys, err := cycleKeys(j.reg, tenants, jobList)
	if err != nil {
		return err
	}
	var ends []cycleEnd
	for _, k := range keys {
		res, err := j.runner.RunOnce(ctx, k)
		ends = append(ends, cycleEnd{key: k, res: res, err: err})
		if ctx.Err() != nil {
			break
		}
	}
	a.pushMetrics(ctx, m, ends)
	outcome, line := lastLine(ends)
	code := outcomeCode(outcome)
	if asJSON {
		if err := printJSON(cmd.OutOrStdout(), newRunSummary(outcome, code, line, ends, sh, tenants)); err != nil {
			return err
		}
	}
	finalLineOf(ctx).write(cmd.ErrOrStderr(), code, line, zap.String("outcome", string(outcome)))
	if code == exitOK {
		return nil
	}
	return withCode(code, errors.New(line))
}

// runSummary is what `hrsync run -o json` prints on stdout: the run's
// outcome, exit code and last line, the shard (--shard) and the tenants it
// ran, and each cycle with its job's report.
type runSummary struct {
	Outcome  model.RunOutcome `json:"outcome"`
	ExitCode int              `json:"exitCode"`
	Message  string           `json:"message"`
	Shard    string           `json:"shard,omitempty"`
	Tenants  []string         `json:"tenants"`
	Cycles   []cycleSummary   `json:"cycles"`
}

// cycleSummary is one cycle of a run in its JSON summary.
type cycleSummary struct {
	Job     model.Job        `json:"job"`
	Tenant  string           `json:"tenant"`
	Outcome model.RunOutcome `json:"outcome"`
	Cause   string           `json:"cause"`
	Next    string           `json:"next"`
	Counts  map[string]int   `json:"counts"`
	Error   string           `json:"error,omitempty"`
	Report  any              `json:"report"`
}

// newRunSummary builds a run's JSON summary.
func newRunSummary(outcome model.RunOutcome, code int, line string, ends []cycleEnd, sh shard.Shard, tenants []config.Tenant) runSummary {
	s := runSummary{Outcome: outcome, ExitCode: code, Message: line, Shard: sh.String(),
		Tenants: tenantNames(tenants), Cycles: make([]cycleSummary, 0, len(ends))}
	for i := range ends {
		e := &ends[i]
		cause, next := describeCycle(e)
		c := cycleSummary{Job: e.key.Job, Tenant: e.key.Tenant, Outcome: e.res.Outcome, Cause: cause, Next: next,
			Counts: e.res.Counts, Report: e.res.Report}
		if c.Counts == nil {
			c.Counts = map[string]int{}
		}
		if e.err != nil {
			c.Error = e.err.Error()
		}
		s.Cycles = append(s.Cycles, c)
	}
	return s
}

// cycleKeys lists the cycles a run makes: each job of each tenant, in
// order; `run all` skips the jobs this build lacks.
func cycleKeys(reg *runner.Registry, tenants []config.Tenant, jobList []model.Job) ([]runner.Key, error) {
	var keys []runner.Key
	for _, t := range tenants {
		for _, job := range jobList {
			k := runner.Key{Job: job, Tenant: t.Name}
			if _, ok := reg.Lookup(k); !ok {
				if len(jobList) > 1 {
					continue // run all: the jobs this build has
				}
				return nil, withCode(exitUsage, fmt.Errorf("the %s job is not available in this build yet", job))
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// cycleEnd is how one cycle of a run ended.
type cycleEnd struct {
	key runner.Key
	res runner.Result
	err error
}

// outcomeCode is the exit code of an outcome (README.md, Exit codes).
func outcomeCode(o model.RunOutcome) int {
	switch o {
	case model.OutcomeOK:
		return exitOK
	case model.OutcomeAttention:
		return exitAttention
	case model.OutcomeSafeguard:
		return exitSafeguard
	case model.OutcomeLocked:
		return exitLockHeld
	}
	return exitFailed
}

// lastLine is the run's worst outcome and its last line: "OUTCOME: JOB
// TENANT: CAUSE; NEXT STEP", naming the first cycle that ended worst, and how
// many other cycles did not end ok.
func lastLine(ends []cycleEnd) (model.RunOutcome, string) {
	if len(ends) == 0 {
		return model.OutcomeOK, "ok: nothing to run"
	}
	worst := model.OutcomeOK
	for _, e := range ends {
		worst = runner.Worst(worst, e.res.Outcome)
	}
	var first *cycleEnd
	others := 0
	for i := range ends {
		e := &ends[i]
		switch {
		case first == nil && e.res.Outcome == worst:
			first = e
		case e.res.Outcome != model.OutcomeOK:
			others++
		}
	}
	cause, next := describeCycle(first)
	line := fmt.Sprintf("%s: %s %s: %s", worst, first.key.Job, first.key.Tenant, cause)
	if next != "" {
		line += "; " + next
	}
	if len(ends) > 1 && worst == model.OutcomeOK {
		line = "ok: " + cyclesDone(ends)
	}
	if others > 0 {
		line += fmt.Sprintf(" (and %s that did not end ok: see above)", plural(others, "other cycle", "other cycles"))
	}
	return worst, line
}

// cyclesDone says which cycles a run made: "3 cycles done (people,
// personalize, orders of tenant acme)".
func cyclesDone(ends []cycleEnd) string {
	var jobs, tenants []string
	for _, e := range ends {
		if !slices.Contains(jobs, string(e.key.Job)) {
			jobs = append(jobs, string(e.key.Job))
		}
		if !slices.Contains(tenants, e.key.Tenant) {
			tenants = append(tenants, e.key.Tenant)
		}
	}
	of := "tenant " + tenants[0]
	if len(tenants) > 1 {
		of = plural(len(tenants), "tenant", "tenants")
	}
	return fmt.Sprintf("%d cycles done (%s of %s)", len(ends), strings.Join(jobs, ", "), of)
}

// describeCycle is a cycle's cause and next step: the job's own words when
// it gave them, else words made from its error or counts.
func describeCycle(e *cycleEnd) (cause, next string) {
	res := e.res
	if res.Cause != "" {
		return res.Cause, res.Next
	}
	switch res.Outcome {
	case model.OutcomeLocked:
		return "another run of this job and tenant holds the lock", "the next run goes ahead once it ends; nothing to do unless it repeats"
	case model.OutcomeFailed:
		if e.err == nil {
			return "the run failed", "see the logs"
		}
		if class := apiclient.ClassOf(e.err); class != apiclient.ClassOther && class != apiclient.ClassStopped {
			return e.err.Error(), class.NextStep()
		}
		return e.err.Error(), "see the logs"
	case model.OutcomeAttention:
		return "done, needs attention: " + nonZeroCounts(res.Counts, attentionCount), "see the run's report and 'hrsync status'"
	}
	if len(res.Counts) == 0 {
		return "done", ""
	}
	return "done: " + nonZeroCounts(res.Counts, nil), ""
}

// attentionCount reports whether a count of the personalize or orders job
// makes a cycle need attention.
func attentionCount(k string) bool {
	switch k {
	case "retry", "gaveUp", "unusable", "leftForOperator", "pollErrors", "productErrors", "refused":
		return true
	}
	return false
}

// nonZeroCounts renders the counts that are not zero as k=v, sorted; only
// the keys keep accepts when keep is not nil.
func nonZeroCounts(counts map[string]int, keep func(string) bool) string {
	if c := notify.CountsText(counts, keep); c != "" {
		return c
	}
	return "nothing to do"
}

// plural renders n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
