package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/daemon"
	"hrsync/internal/metrics"
	"hrsync/internal/runner"
	"hrsync/store"
)

func newDaemonCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the jobs on their cron schedules and serve /healthz, /readyz and /metrics",
		Long: `daemon runs each tenant's jobs on the schedules of its configuration (tenants[].schedules, read
in the configured timezone; a six-field spec starts with seconds) and serves /healthz, /readyz and
/metrics on http.listen. A job never overlaps itself: a tick that comes while its previous run is
still going is skipped, and the store's lock keeps replicas apart. A panicking job is recorded as a
failed run and the daemon goes on. SIGTERM or SIGINT drains: no new run starts, each run in flight
goes on to its end and commits for two thirds of the grace period (--grace, else daemon.grace,
default 25s; all but 15s of a grace over 45s), then the runs still going are cut short and record
themselves as interrupted; the daemon exits 0, or 1 if runs were still going after the grace
period. Keep the grace under the pod's terminationGracePeriodSeconds.

With scim.listen set, it also serves the SCIM 2.0 endpoint (/scim/v2) on that address, a listener
of its own, to the identity providers of the tenants whose source is scim, each selected by its
token. A tenant's SCIM write runs its people job scim.settle after the tenant's last write (a burst
gives one run), as a scheduled run is; SCIM answers never wait for it. At start, each such people
job runs once after scim.settle.

With PostgreSQL state, several daemons (replicas) share the tenants: at each tick of each job of
each tenant, one replica claims the tick and runs it, the others leave it; idle replicas claim
first, so the work spreads. Each replica names itself with --replica-id (default
$HRSYNC_REPLICA_ID, else host name and process id) in the runs it records and the ticks it claims.
With SQLite state, run one daemon.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := loadApp(cmd)
			if err != nil {
				return err
			}
			grace := a.cfg.Daemon.Grace.Duration
			if cmd.Flags().Changed("grace") {
				grace, _ = cmd.Flags().GetDuration("grace")
			}
			if grace <= 0 {
				return withCode(exitUsage, errors.New("--grace: must be greater than 0"))
			}
			return runDaemon(cmd.Context(), a, cmd, grace)
		},
	}
	addConfigFlags(cmd)
	cmd.Flags().Duration("grace", config.DefaultDaemonGrace,
		"how long a stopping daemon waits for the runs in flight (default: daemon.grace); they are cut short after two thirds of it")
	cmd.Flags().String("replica-id", "", "this replica's name in runs and claimed ticks (default $"+envReplicaID+", else host name and process id)")
	return cmd
}

// runDaemon runs the daemon until ctx is cancelled.
func runDaemon(ctx context.Context, a *app, cmd *cobra.Command, grace time.Duration) error {
	tenants, err := a.tenants(cmd)
	if err != nil {
		return err
	}
	m := newMetrics(tenants)
	j, err := a.newJobs(ctx, tenants, m, runner.Env{Flags: runner.Flags{ConfigPath: a.configPath}}, nil)
	if err != nil {
		return err
	}
	defer j.st.Close()
	a.closeInterrupted(ctx, j)
	a.seedMetrics(ctx, m, j.st, tenants)
	a.watchGauges(m, tenants, j.st)
	out := cmd.OutOrStdout()
	var d *daemon.Daemon // the SCIM endpoint's writes trigger its runs; set before it serves
	ep, err := a.newSCIMEndpoint(tenants, j.st, j.reg, out, func(k runner.Key) { d.Trigger(k) })
	if err != nil {
		return withCode(exitUsage, err)
	}
	schedules := daemonSchedules(a.log, tenants, j.reg)
	if len(schedules) == 0 && len(ep.triggered) == 0 {
		return withCode(exitUsage, errors.New("no job is scheduled: set tenants[].schedules"))
	}
	d, err = daemon.New(a.daemonOptions(j, m, schedules, ep, out, grace))
	if err != nil {
		return withCode(exitUsage, err)
	}
	if err := d.Run(ctx); err != nil {
		return withCode(exitFailed, err)
	}
	return nil
}

// daemonOptions are the daemon's options: the jobs' runner and schedules,
// the health and metrics endpoint on http.listen, the SCIM endpoint and the
// jobs its writes trigger, and, with state shared by replicas, the claimer
// of the fleet's ticks.
func (a *app) daemonOptions(j *jobs, m *metrics.Metrics, schedules []daemon.Schedule, ep scimEndpoint, out io.Writer, grace time.Duration) daemon.Options {
	var claimer daemon.Claimer
	if j.st.Capabilities().ClaimTicks {
		claimer = tickClaimer{j.st}
		a.log.Info("state shared by replicas: this daemon is one replica of a fleet; each tick is claimed by one replica",
			zap.String("replica", a.replica))
	}
	return daemon.Options{
		Runner:    j.runner,
		Schedules: schedules,
		Parser:    config.ScheduleParser(),
		Location:  a.cfg.Location(),
		Listen:    a.cfg.HTTP.Listen,
		Ready: func(ctx context.Context) error {
			_, _, err := j.st.MigrationVersion(ctx)
			return err
		},
		Metrics: m,
		Grace:   grace,
		Logger:  a.log.Named("daemon"),
		OnListen: func(addr net.Addr) {
			fmt.Fprintf(out, "daemon listening on http://%s (/healthz /readyz /metrics)\n", addr)
		},
		Claimer:   claimer,
		Servers:   ep.servers,
		Triggered: ep.triggered,
		Settle:    a.cfg.SCIM.Settle.Duration,
	}
}

// daemonSchedules lists the schedules of the registered jobs, in their
// order; a job scheduled in the configuration but not in this build is
// logged and left out.
func daemonSchedules(log *zap.Logger, tenants []config.Tenant, reg *runner.Registry) []daemon.Schedule {
	var out []daemon.Schedule
	for _, t := range tenants {
		for _, kind := range runner.Kinds() {
			spec := ""
			if kind.Schedule != nil {
				spec = kind.Schedule(t)
			}
			if spec == "" {
				continue
			}
			k := runner.Key{Job: kind.Job, Tenant: t.Name}
			if _, ok := reg.Lookup(k); !ok {
				log.Warn("job scheduled but not available in this build; not scheduled",
					zap.String("job", string(kind.Job)), zap.String("tenant", t.Name))
				continue
			}
			out = append(out, daemon.Schedule{Key: k, Spec: spec})
		}
	}
	return out
}

// tickClaimer claims the ticks of a fleet's replicas in the store.
type tickClaimer struct{ st *store.Store }

// Claim claims the tick at of k for this replica (store.ClaimTick).
func (c tickClaimer) Claim(ctx context.Context, k runner.Key, at time.Time) (daemon.Claim, error) {
	t, err := c.st.ClaimTick(ctx, k.Job, k.Tenant, at)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// closeInterrupted closes, as the process starts, the runs of its jobs
// that a stopped, killed or crashed process left running and whose lock
// is free (runner.CloseInterrupted); a failure is logged: the next run of
// each job closes its own.
func (a *app) closeInterrupted(ctx context.Context, j *jobs) {
	n, err := j.runner.CloseInterrupted(ctx, j.st)
	if err != nil {
		a.log.Warn("the runs a stopped or killed process left running are not all closed; the next run of each job closes its own", zap.Error(err))
	}
	if n > 0 {
		a.log.Info("runs a stopped or killed process left running are recorded as interrupted", zap.Int("runs", n))
	}
}
