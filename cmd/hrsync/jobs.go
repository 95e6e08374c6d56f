package main

// The jobs both `hrsync run ...` and `hrsync daemon` run: every job kind
// registered with the runner (the job packages register themselves from
// init; see the imports below), for each tenant, in the kinds' order.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
	_ "hrsync/sync/grants"      // registers the grants job
	_ "hrsync/sync/orders"      // registers the orders job
	_ "hrsync/sync/people"      // registers the people sync
	_ "hrsync/sync/personalize" // registers the personalization job
)

// jobs is a runner over the registered jobs with the store they share.
type jobs struct {
	st     *store.Store
	runner *runner.Runner
	reg    *runner.Registry
}

// newJobs opens the store and the API client and registers every job of
// the given tenants with what env holds (its Out, Progress and Flags are
// the caller's); retry is the export `run people --file` takes back. The
// caller closes the store (jobs.st).
func (a *app) newJobs(ctx context.Context, tenants []config.Tenant, m *metrics.Metrics, env runner.Env, retry *retryFile) (*jobs, error) {
	if m != nil {
		a.observer = m.Observer()
	}
	client, err := a.newClient()
	if err != nil {
		return nil, err
	}
	st, err := a.openStore(ctx)
	if se := (*storeError)(nil); errors.As(err, &se) {
		se.tenants = tenantNames(tenants)
	}
	if err != nil {
		return nil, err
	}
	env.Config, env.Store, env.API, env.Log = a.cfg, st, client, a.log
	env.Sources = sourceAccess{a: a, st: st, retry: retry}
	reg := runner.NewRegistry()
	if err := reg.RegisterKinds(env, tenants); err != nil {
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

// sourceAccess gives the jobs the tenants' sources (runner.Sources) over
// the store st; retry, when set, is the one export the people run of its
// tenant takes back from failed/.
type sourceAccess struct {
	a     *app
	st    *store.Store
	retry *retryFile
}

// Feed is the feed of a tenant's people run (retry.go).
func (s sourceAccess) Feed(t config.Tenant) (func(ctx context.Context) ([]sources.Export, error), error) {
	return s.a.peopleFeed(t, s.st, s.retry)
}

// LastExport opens a tenant's last good export (personalize.go).
func (s sourceAccess) LastExport(t config.Tenant) func(ctx context.Context) (sources.Source, bool, error) {
	return s.a.lastExport(t, s.st)
}

// planEnv is the runner.Env of the commands that only plan: the jobs are
// built over the read-only store st, without an API client.
func (a *app) planEnv(st *store.Store) runner.Env {
	return runner.Env{Config: a.cfg, Store: st, Log: a.log, Sources: sourceAccess{a: a, st: st},
		Flags: runner.Flags{ConfigPath: a.configPath}}
}

// newRunCmds are `hrsync run JOB` for each registered job, then `run all`.
func newRunCmds() []*cobra.Command {
	var cmds []*cobra.Command
	all := runner.Jobs()
	names := make([]string, 0, len(all))
	for _, k := range runner.Kinds() {
		cmds = append(cmds, newRunJobCmd(string(k.Job), k.Short, []model.Job{k.Job}))
		names = append(names, string(k.Job))
	}
	if len(names) > 1 {
		names = append(names[:len(names)-2], names[len(names)-2]+" and "+names[len(names)-1])
	}
	return append(cmds, newRunJobCmd("all", "Run "+strings.Join(names, ", ")+", one after the other, for each tenant", all))
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
			flags := runner.Flags{OverrideSafeguards: override, AsOf: asOf, ConfigPath: configPathOf(cmd)}
			return runCycle(cmd.Context(), a, cmd, jobsOf, flags, retry)
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	cmd.Flags().Bool("override-safeguards", false, "go on although a safeguard trips (this run only)")
	if name == string(model.JobPeople) {
		cmd.Flags().String("file", "", "take this export back from the drop folder's failed/ (failed/NAME) and run only it, once; "+
			"with --override-safeguards after a safeguard stop (needs --tenant with several tenants)")
	}
	if name == string(model.JobGrants) {
		cmd.Flags().String("date", "", "grant as of this past day (YYYY-MM-DD, in the rules' time zone) instead of today: "+
			"the occurrences of that day and of the look-back before it that no run granted")
	}
	return cmd
}

// runCycle runs one cycle of each job for each tenant through the runner,
// the same code path as the daemon's scheduled callback, prints the
// reports, pushes the metrics when metrics.pushgateway is set, writes the
// last line (the worst outcome, its cause and the next step) and returns an
// error carrying the exit code of the worst outcome: failed 1, safeguard 3,
// lock held 5, attention 4, else 0.
func runCycle(ctx context.Context, a *app, cmd *cobra.Command, jobList []model.Job, flags runner.Flags, retry *retryFile) error {
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
	env := runner.Env{Out: cmd.OutOrStdout(), Flags: flags, Progress: runner.NewStderrProgress(cmd.ErrOrStderr(), a.log)}
	if asJSON {
		env.Out = nil // one JSON document at the end instead
	}
	var m *metrics.Metrics
	if a.cfg.Metrics.Pushgateway.Value() != "" {
		m = newMetrics(tenants)
	}
	j, err := a.newJobs(ctx, tenants, m, env, retry)
	if se := (*storeError)(nil); asJSON && errors.As(err, &se) {
		// -o json promises one document on stdout, this failure included.
		line, _ := lastWords(cmd, err)
		sum := runner.NewSummary(model.OutcomeFailed, exitFailed, line, nil, sh.String(), tenantNames(tenants))
		if perr := printJSON(cmd.OutOrStdout(), sum); perr != nil {
			return errors.Join(err, perr)
		}
	}
	if err != nil {
		return err
	}
	defer j.st.Close()
	a.closeInterrupted(ctx, j)
	if m != nil {
		a.seedMetrics(ctx, m, j.st, tenants)
		a.watchGauges(m, tenants, j.st) // read once, when the run pushes
	}
	keys, err := j.reg.Cycles(tenantNames(tenants), jobList)
	if err != nil {
		return withCode(exitUsage, err)
	}
	var ends []runner.End
	for _, k := range keys {
		res, err := j.runner.RunOnce(ctx, k)
		ends = append(ends, runner.End{Key: k, Res: res, Err: err})
		if env.Out != nil && res.Outcome == model.OutcomeLocked {
			// The job printed nothing: it did not run.
			cause, _ := ends[len(ends)-1].Describe()
			fmt.Fprintf(env.Out, "tenant %s, %s: %s: %s\n", k.Tenant, k.Job, res.Outcome, cause)
		}
		if ctx.Err() != nil {
			break
		}
	}
	a.pushMetrics(ctx, m, ends)
	outcome, line := runner.LastLine(ends)
	code := outcomeCode(outcome)
	if asJSON {
		sum := runner.NewSummary(outcome, code, line, ends, sh.String(), tenantNames(tenants))
		if err := printJSON(cmd.OutOrStdout(), sum); err != nil {
			return err
		}
	}
	finalLineOf(ctx).write(cmd.ErrOrStderr(), code, line, zap.String("outcome", string(outcome)))
	if code == exitOK {
		return nil
	}
	return withCode(code, errors.New(line))
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
