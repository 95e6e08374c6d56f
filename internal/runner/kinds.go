package runner

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"go.uber.org/zap"

	"hrsync/apiclient"
	"hrsync/config"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// Kind is a job as it registers with the runner: its name, its place in
// `run all` and the daemon, its schedule in a tenant's configuration, and
// how it builds one cycle for a tenant. A job package registers its Kind
// from init with RegisterKind; the job owns its config → Options mapping,
// its report and its printing, so cmd only wires configuration to it.
type Kind struct {
	// Job names the job (`hrsync run JOB`, run records, metrics, locks).
	Job model.Job
	// Order places the job among the others: `run all` runs a tenant's
	// jobs by increasing Order, and the daemon lists them so.
	Order int
	// Short is the one-line help of `hrsync run JOB`.
	Short string
	// Schedule is the job's cron spec in a tenant's configuration; ""
	// leaves the job unscheduled by the daemon.
	Schedule func(t config.Tenant) string
	// Gauges name the scrape-time gauges the job's pushed metrics group
	// carries: what waits after its run, read when the run pushes.
	Gauges []string
	// Cycle returns the Func that runs one cycle of the job for t with
	// what env holds.
	Cycle func(env Env, t config.Tenant) Func
}

// Env is what the jobs of one process share: the configuration, the
// store, the API client, the tenants' sources, where reports print and
// the operator's choices for this run.
type Env struct {
	// Config is the whole configuration (api.trustIdempotencyKey and the
	// like; a tenant's own section is given to Kind.Cycle).
	Config *config.Config
	Store  *store.Store
	// API is the platform's client.
	API *apiclient.Client
	// Sources reaches the tenants' sources.
	Sources Sources
	// Log is the process's logger; a job adds its job and tenant.
	Log *zap.Logger
	// Out receives each cycle's printed report; nil prints none (the
	// daemon, and `run -o json`, which prints one document at the end).
	Out io.Writer
	// Progress, when not nil, shows how far a long cycle has got.
	Progress *Progress
	// Flags are the operator's choices for this run.
	Flags Flags
}

// Flags are the operator's per-run choices; the daemon leaves them zero.
type Flags struct {
	// OverrideSafeguards lets a run go on although a safeguard trips.
	OverrideSafeguards bool
	// AsOf, when not zero, is the day the grants job grants as of.
	AsOf time.Time
	// ConfigPath is the configuration file as the operator named it, for
	// the commands a report suggests.
	ConfigPath string
}

// Sources is how the jobs reach the tenants' sources: the exports ready
// for a people run and the last good export that personalize and the
// birthday rules read again.
type Sources interface {
	// Feed returns the lister of the exports ready for t's people run.
	Feed(t config.Tenant) (func(ctx context.Context) ([]sources.Export, error), error)
	// LastExport returns the opener of t's last good export.
	LastExport(t config.Tenant) func(ctx context.Context) (sources.Source, bool, error)
}

// JobLog is env's logger for one job of one tenant.
func (env Env) JobLog(job model.Job, tenant string) *zap.Logger {
	log := env.Log
	if log == nil {
		log = zap.NewNop()
	}
	return log.With(zap.String("tenant", tenant), zap.String("job", string(job)))
}

// kinds is the init-only registry of job kinds: RegisterKind fills it
// from the job packages' init functions, and it is only read afterwards.
var kinds []Kind //nolint:gochecknoglobals // the job packages register their kinds from init (as database/sql drivers do); written nowhere else

// RegisterKind registers a job kind. It is meant for init functions and
// panics on a kind without a name or cycle, or registered twice.
func RegisterKind(k Kind) {
	if k.Job == "" || k.Cycle == nil {
		panic("runner: RegisterKind needs a job name and a cycle")
	}
	if _, dup := LookupKind(k.Job); dup {
		panic(fmt.Sprintf("runner: job %s registered twice", k.Job))
	}
	kinds = append(kinds, k)
	slices.SortStableFunc(kinds, func(a, b Kind) int { return cmp.Compare(a.Order, b.Order) })
}

// Kinds lists the registered job kinds by Order.
func Kinds() []Kind { return slices.Clone(kinds) }

// LookupKind returns the kind registered as job.
func LookupKind(job model.Job) (Kind, bool) {
	for _, k := range kinds {
		if k.Job == job {
			return k, true
		}
	}
	return Kind{}, false
}

// GaugesOf names the scrape-time gauges the pushed metrics group of job
// carries (Kind.Gauges); none for a job not registered.
func GaugesOf(job model.Job) []string {
	k, _ := LookupKind(job)
	return k.Gauges
}

// Jobs lists the registered jobs by Order: the jobs of `run all`.
func Jobs() []model.Job {
	out := make([]model.Job, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.Job)
	}
	return out
}

// RegisterKinds registers, in r, every registered kind's cycle for each
// tenant, with what env holds.
func (r *Registry) RegisterKinds(env Env, tenants []config.Tenant) error {
	for _, t := range tenants {
		for _, k := range kinds {
			if err := r.Register(k.Job, t.Name, k.Cycle(env, t)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Cycles lists the cycles a run makes: each of jobs for each tenant, in
// order. With several jobs (`run all`) a job not registered is left out;
// a single one not registered is an error.
func (r *Registry) Cycles(tenants []string, jobs []model.Job) ([]Key, error) {
	var keys []Key
	for _, t := range tenants {
		for _, job := range jobs {
			k := Key{Job: job, Tenant: t}
			if _, ok := r.Lookup(k); !ok {
				if len(jobs) > 1 {
					continue
				}
				return nil, fmt.Errorf("the %s job is not available in this build yet", job)
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}
