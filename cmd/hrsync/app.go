package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/apiclient"
	"hrsync/config"
	"hrsync/internal/jsonstream"
	"hrsync/internal/logging"
	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/store"
	"hrsync/sync/people"
)

// app is what a command needs: the configuration and a logger; the store and
// the API client are opened on demand.
type app struct {
	cfg *config.Config
	log *zap.Logger
	// observer is set by run and daemon (jobs.go).
	observer apiclient.Observer
	// replica names this process in the runs it records and the ticks it
	// claims (replica.go).
	replica string
	// configPath is the configuration file as the operator named it, for
	// the commands a report suggests (retry.go).
	configPath string
}

// addConfigFlags adds the flags every command that reads the configuration takes.
func addConfigFlags(cmd *cobra.Command) {
	cmd.Flags().String("config", "", "configuration file (default $"+config.EnvConfig+")")
	cmd.Flags().String("tenant", "", "only this tenant (default: every tenant of the file)")
}

// loadApp reads the configuration named by --config and builds the logger.
// The drop folders the command needs are checked with the file (see
// folderAccess). A configuration problem exits with the configuration code.
func loadApp(cmd *cobra.Command) (*app, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, err := config.LoadChecked(path, nil, registry.Kinds{}, store.Dialects{}, folderChecks(cmd))
	if err != nil {
		return nil, configError(cmd, path, err)
	}
	log, jsonLogs, err := logging.New(cfg.Log)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	log = log.With(zap.String("version", version))
	if jsonLogs {
		finalLineOf(cmd.Context()).useJSON(log)
	}
	if cfg.API.InsecureHTTP() {
		log.Warn("api.allowInsecureHTTP: the API token is sent in clear over plain HTTP to a host that is not loopback",
			zap.String("baseUrl", cfg.API.BaseURL))
	}
	replica := replicaID(cmd)
	return &app{cfg: cfg, log: log.With(zap.String("replica", replica)), replica: replica,
		configPath: configPathOf(cmd)}, nil
}

// configError is the usage error of a configuration that cannot be
// loaded. Its last line is a JSON log line when the configuration asks for
// JSON logs (log.format: json, or HRSYNC_LOG_FORMAT=json), as far as that
// can be read from it, so that stderr stays one format.
func configError(cmd *cobra.Command, path string, err error) error {
	if lc := config.PeekLog(path, nil); lc.Format == "json" {
		log, _, lerr := logging.New(lc)
		if lerr != nil { // a bad level: say the problem at info
			log, _, lerr = logging.New(config.Log{Level: "info", Format: "json"})
		}
		if lerr == nil {
			finalLineOf(cmd.Context()).useJSON(log.With(zap.String("version", version)))
		}
	}
	return withCode(exitUsage, err)
}

// folderAccess is how much of the CSV drop folders a command needs, checked
// before it starts (exit 2 on a problem, every problem listed):
//
//   - the daemon moves files into processed/ and failed/: each folder must
//     be readable and writable, and so must processed/ and failed/ (created
//     by the first archive when missing), or it does not start;
//   - run people and run all check the same at the start of each people
//     cycle instead (folderExportsFeed): there a problem is the cycle's
//     failed outcome (exit 1), with its run record, last line and metrics,
//     before any call;
//   - status lists the files in each folder and its archives, and shows
//     each tenant's source problem (a folder that cannot be listed, a
//     secret variable not set) beside its history instead of failing
//     (config.Checks.SourcesAside);
//   - validate and plan read the folder when given no FILE: it must be
//     readable; given FILEs they read only those, so an HR admin can check an
//     export on a laptop where the drop folder does not exist;
//   - config check checks like run (config.go);
//   - the other commands never read the folders: nothing is checked.
func folderAccess(cmd *cobra.Command) config.FolderAccess {
	switch commandName(cmd) {
	case "daemon":
		return config.FoldersWritable
	case "status":
		return config.FoldersReadable
	case "validate", "plan":
		if cmd.Flags().NArg() == 0 {
			return config.FoldersReadable
		}
	}
	return config.FoldersUnchecked
}

// folderChecks are the checks of the drop folders of the tenants a command
// acts on (--tenant, or all).
func folderChecks(cmd *cobra.Command) config.Checks {
	tenant, _ := cmd.Flags().GetString("tenant")
	return config.Checks{Folders: folderAccess(cmd), Tenant: tenant, SourcesAside: isStatus(cmd)}
}

// commandName is the command's path without the root's name: "status",
// "run people".
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// isStatus tells whether cmd is `hrsync status`, which answers whatever
// state the tenants' sources are in.
func isStatus(cmd *cobra.Command) bool { return commandName(cmd) == "status" }

// tenants returns the tenants a command acts on: the one --tenant names, or all.
func (a *app) tenants(cmd *cobra.Command) ([]config.Tenant, error) {
	name, _ := cmd.Flags().GetString("tenant")
	if name == "" {
		return a.cfg.Tenants, nil
	}
	t, ok := a.cfg.Tenant(name)
	if !ok {
		return nil, withCode(exitUsage, fmt.Errorf("no tenant %q in the configuration", name))
	}
	return []config.Tenant{*t}, nil
}

// loadAppStore reads the configuration and opens the store: what every
// command that reads or decides on state starts with. The caller closes the store.
func loadAppStore(cmd *cobra.Command) (*app, *store.Store, error) {
	a, err := loadApp(cmd)
	if err != nil {
		return nil, nil, err
	}
	st, err := a.openStore(cmd.Context())
	if err != nil {
		return nil, nil, err
	}
	return a, st, nil
}

// readOnly is what a command that only reads the state starts with: its
// output format, the configuration, the state opened read-only (never
// created) and the tenants it acts on.
type readOnly struct {
	a       *app
	st      *store.Store
	tenants []config.Tenant
	asJSON  bool
}

// withReadOnly is the one preamble of the read-only commands (status, plan,
// plan grants, grants list, orders show): output format → read-only store
// → tenants (unless allTenants: the command filters by --tenant itself) →
// fn → close.
func withReadOnly(cmd *cobra.Command, allTenants bool, fn func(ro readOnly) error) error {
	format, err := outputFormat(cmd)
	if err != nil {
		return err
	}
	a, err := loadApp(cmd)
	if err != nil {
		return err
	}
	st, err := a.openStoreReadOnly(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	ro := readOnly{a: a, st: st, tenants: a.cfg.Tenants, asJSON: format == outputJSON}
	if !allTenants {
		if ro.tenants, err = a.tenants(cmd); err != nil {
			return err
		}
	}
	return fn(ro)
}

// openStoreReadOnly opens the configured state for reading, creating nothing
// (no SQLite file, no PostgreSQL schema, no migration). When nothing has run
// yet it says "no state yet at PATH" (on stdout, or only in the log when the
// command prints JSON) and returns an empty throwaway state, so that status
// and grants list show nothing and plan plans against an empty state.
func (a *app) openStoreReadOnly(cmd *cobra.Command) (*store.Store, error) {
	ctx := cmd.Context()
	st, err := store.Open(ctx, a.cfg.Store.URL.Value(), store.Options{Schema: a.cfg.Store.Schema, ReadOnly: true})
	switch {
	case errors.Is(err, store.ErrNoState):
		where := a.cfg.Store.Location()
		if p, _, ok := a.cfg.Store.StateFile(); ok {
			where = p
		}
		a.log.Info("no state yet", zap.String("at", where))
		if !printsJSON(cmd) {
			fmt.Fprintf(cmd.OutOrStdout(), "no state yet at %s\n", where)
		}
		return store.OpenEmpty(ctx)
	case errors.Is(err, store.ErrStateOutdated):
		return nil, fmt.Errorf("state at %s: %w: run hrsync migrate", a.cfg.Store.Location(), err)
	case err != nil:
		return nil, &storeError{err: fmt.Errorf("open store %s: %w", a.cfg.Store.URL, err)}
	}
	return st, nil
}

// printsJSON tells whether the command was asked for JSON output (--json,
// or -o/--output json).
func printsJSON(cmd *cobra.Command) bool {
	if v, err := cmd.Flags().GetBool("json"); err == nil && v {
		return true
	}
	v, err := cmd.Flags().GetString("output")
	return err == nil && v == "json"
}

// openStore opens and migrates the configured store.
func (a *app) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, a.cfg.Store.URL.Value(), store.Options{Schema: a.cfg.Store.Schema, Migrate: true, Replica: a.replica})
	if err != nil {
		return nil, &storeError{err: fmt.Errorf("open store %s: %w", a.cfg.Store.URL, err)}
	}
	return st, nil
}

// newClient builds the API client from the configuration.
func (a *app) newClient() (*apiclient.Client, error) {
	if !a.cfg.API.Token.IsSet() {
		return nil, withCode(exitUsage, errors.New("no API token: set HRSYNC_API_TOKEN or api.tokenFile"))
	}
	c, err := apiclient.New(apiclient.Config{
		BaseURL:            a.cfg.API.BaseURL,
		Token:              a.cfg.API.Token.Value(),
		UserAgentVersion:   version,
		Timeout:            a.cfg.API.Timeout.Duration,
		PersonalizeTimeout: a.cfg.API.PersonalizeTimeout.Duration,
		RatePerSecond:      a.cfg.API.RatePerSecond,
		Burst:              a.cfg.API.Burst,
		MaxConcurrency:     a.cfg.API.MaxConcurrency,
		MaxAttempts:        a.cfg.API.MaxAttempts,
		Logger:             a.log.Named("api"),
		Observer:           a.observer,
	})
	if err != nil {
		return nil, withCode(exitUsage, fmt.Errorf("api client: %w", err))
	}
	return c, nil
}

// feed lists the tenant's ready exports, as its kind of source finds them.
// With files given, those files are the exports (read in place, never
// archived: for validate and plan); a kind that reads no files refuses
// them with the usage code.
func (a *app) feed(t config.Tenant, st *store.Store, files []string) (people.Feed, error) {
	if len(files) > 0 {
		opts, err := registry.Of(t.Source.Options)
		if err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("tenant %s: %w", t.Name, err))
		}
		list, err := opts.Files(files)
		if err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("tenant %s %w", t.Name, err))
		}
		return list, nil
	}
	return func(ctx context.Context) ([]sources.Export, error) {
		// The source is opened at each listing, so that a folder gone or
		// unreadable fails the run that meets it, with its run record.
		src, err := a.openSource(ctx, t, st)
		if err != nil {
			return nil, err
		}
		return src.Feed(ctx)
	}, nil
}

// openSource opens the tenant's source with the kind that configured it
// (the kinds register themselves: see the imports of main.go); st, when
// not nil, is the state a kind that reads it (scim) reads.
func (a *app) openSource(ctx context.Context, t config.Tenant, st *store.Store) (registry.Source, error) {
	log := a.log.With(zap.String("tenant", t.Name))
	env := registry.Env{Tenant: t.Name, Warn: func(msg string) { log.Warn(msg) }}
	if st != nil {
		env.Directory = st
	}
	return registry.Open(ctx, t.Source.Options, env)
}

// printJSON writes v as indented JSON and a newline, the form of every
// --json output; a value that streams (jsonstream.Streamer: a run's
// summary, a people report) is written as it is made.
func printJSON(w io.Writer, v any) error {
	return jsonstream.Encode(w, v, "", "  ")
}

// withoutPath is err without the path of a *fs.PathError (it holds the
// raw name, which the caller prints escaped).
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
