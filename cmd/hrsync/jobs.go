package main

// The jobs both `hrsync run ...` and `hrsync daemon` run, registered in one
// runner.Registry: a job plugs in with one Register line in registerJobs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/store"
	"hrsync/sync/people"
)

// allJobs are the jobs in the order `run all` runs them for a tenant.
func allJobs() []store.Job {
	return []store.Job{store.JobPeople, store.JobPersonalize, store.JobOrders}
}

// jobOptions are the per-process choices of the jobs a runner holds.
type jobOptions struct {
	// out receives each run's printed report; nil prints none (daemon).
	out io.Writer
	// flags are the operator's per-run choices for the people sync.
	flags people.RunFlags
	// configPath is the configuration file as the operator named it, for
	// the commands a report suggests (retry.go).
	configPath string
	// retry, when set, is the one export the people job of its tenant
	// takes back from failed/ and runs (retry.go).
	retry *retryFile
	// stops, when set, collects the next step of each safeguard stop.
	stops *safeguardStops
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
	r, err := runner.New(runner.Options{Registry: reg, Recorder: st, Metrics: m, Logger: a.log})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &jobs{st: st, runner: r, reg: reg}, nil
}

// registerJobs registers each job of each tenant; one line per job.
func (a *app) registerJobs(reg *runner.Registry, tenants []config.Tenant, st *store.Store, client people.Creator, opts jobOptions) error {
	for _, t := range tenants {
		if err := reg.Register(store.JobPeople, t.Name, a.peopleFunc(t, st, client, opts)); err != nil {
			return err
		}
		if err := reg.Register(store.JobPersonalize, t.Name, a.personalizeFunc(t, st, client, opts)); err != nil {
			return err
		}
		if err := reg.Register(store.JobOrders, t.Name, a.ordersFunc(t, st, client, opts)); err != nil {
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
			return runner.Result{Outcome: store.OutcomeFailed}, err
		}
		feed, err := a.peopleFeed(t, opts.retry)
		if err != nil {
			return runner.Result{Outcome: store.OutcomeFailed}, err
		}
		rep, err := job.RunOnce(ctx, feed, opts.flags)
		if a.progress != nil {
			a.progress.End()
		}
		if rep == nil {
			return runner.Result{}, err
		}
		if opts.out != nil {
			printReport(opts.out, rep, opts.configPath)
		}
		opts.stops.add(rep)
		res := runner.Result{Outcome: rep.Outcome(), Counts: map[string]int{}, GrantsHeld: &rep.HeldGrants}
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
	return a.progress.Func("people " + tenant + ": new people sent")
}

// stderrIsTerminal tells whether stderr is a terminal.
func stderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newRunJobCmd is `hrsync run JOB` for a job of the registry, or `run all`.
func newRunJobCmd(name, short string, jobsOf []store.Job) *cobra.Command {
	cmd := &cobra.Command{
		Use:   name,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := loadApp(cmd)
			if err != nil {
				return err
			}
			override, _ := cmd.Flags().GetBool("override-safeguards")
			retry, err := retryFromFlags(cmd, a)
			if err != nil {
				return err
			}
			return runCycle(cmd.Context(), a, cmd, jobsOf, jobOptions{flags: people.RunFlags{OverrideSafeguards: override},
				configPath: configPathOf(cmd), retry: retry, stops: &safeguardStops{configPath: configPathOf(cmd)}})
		},
	}
	addConfigFlags(cmd)
	cmd.Flags().Bool("override-safeguards", false, "go on although a safeguard trips (this run only)")
	if name == "people" {
		cmd.Flags().String("file", "", "take this export back from the drop folder's failed/ (failed/NAME) and run only it, once; "+
			"with --override-safeguards after a safeguard stop (needs --tenant with several tenants)")
	}
	return cmd
}

// runCycle runs one cycle of each job for each tenant through the runner,
// the same code path as the daemon's scheduled callback, prints the
// reports and returns an error carrying the exit code of the worst outcome:
// failed 1, safeguard 3, lock held 5, attention 4, else 0.
func runCycle(ctx context.Context, a *app, cmd *cobra.Command, jobList []store.Job, opts jobOptions) error {
	tenants, err := a.tenants(cmd)
	if err != nil {
		return err
	}
	a.progress = runner.NewProgress(cmd.ErrOrStderr(), stderrIsTerminal(), 0)
	opts.out = cmd.OutOrStdout()
	j, err := a.newJobs(ctx, tenants, nil, opts)
	if err != nil {
		return err
	}
	defer j.st.Close() //nolint:errcheck // every outcome is committed
	var keys []runner.Key
	for _, t := range tenants {
		for _, job := range jobList {
			k := runner.Key{Job: job, Tenant: t.Name}
			if _, ok := j.reg.Lookup(k); !ok {
				if len(jobList) > 1 {
					continue // run all: the jobs this build has
				}
				return withCode(exitUsage, fmt.Errorf("the %s job is not available in this build yet", job))
			}
			keys = append(keys, k)
		}
	}
	worst := store.OutcomeOK
	var firstErr, lockErr error
	for _, k := range keys {
		res, err := j.runner.RunOnce(ctx, k)
		worst = runner.Worst(worst, res.Outcome)
		switch {
		case res.Outcome == store.OutcomeLocked:
			if lockErr == nil {
				lockErr = fmt.Errorf("another %s run of tenant %s holds the lock; try again later", k.Job, k.Tenant)
			}
		case err != nil && firstErr == nil:
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case worst == store.OutcomeFailed || firstErr != nil:
		if firstErr == nil {
			firstErr = errors.New("a run failed")
		}
		return withCode(exitFailed, firstErr)
	case worst == store.OutcomeSafeguard:
		return withCode(exitSafeguard, errors.New("a safeguard stopped the run before any call; see the report, fix the export or "+opts.stops.nextStep()))
	case worst == store.OutcomeLocked:
		return withCode(exitLockHeld, lockErr)
	case worst == store.OutcomeAttention:
		return withCode(exitAttention, errors.New("done, but rows were rejected or grants are held: see the report and 'hrsync grants list'"))
	}
	return nil
}
