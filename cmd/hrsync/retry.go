package main

// The way forward after a safeguard stop: `hrsync run people --config F
// --tenant T --override-safeguards --file failed/NAME` takes the export a
// safeguard stopped back from the tenant's failed/ folder and runs it, and
// only it, once, through the same runner and RunOnce as every run. The
// stop's report and the run's last line print that exact command.
//
// --file does not imply the override: without --override-safeguards the
// export runs again with every safeguard on (for an export that failed for
// a reason since fixed, such as the column mapping).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/sources"
	"hrsync/sources/registry"
	"hrsync/store"
	"hrsync/sync/people"
)

// retryFile is the export `run people --file` takes back from a tenant's
// failed/ folder for one run.
type retryFile struct {
	tenant string
	// rel is the path as the operator gave it ("failed/NAME"), checked.
	rel string
}

// retryFromFlags reads --file of `run people`: nil without it. It refuses
// with the usage code a run that would not act on exactly one tenant fed by
// a drop folder, and a name that is not an export in that folder's failed/
// (outside it, escaping it, missing, or already taken back).
func retryFromFlags(cmd *cobra.Command, a *app) (*retryFile, error) {
	if cmd.Flags().Lookup("file") == nil || !cmd.Flags().Changed("file") {
		return nil, nil // no --file: an ordinary run
	}
	rel, _ := cmd.Flags().GetString("file")
	tenants, err := a.tenants(cmd)
	if err != nil {
		return nil, err
	}
	if len(tenants) != 1 {
		names := make([]string, 0, len(tenants))
		for _, t := range tenants {
			names = append(names, t.Name)
		}
		return nil, withCode(exitUsage, fmt.Errorf("--file names an export of one tenant's drop folder: add --tenant (one of %s)", strings.Join(names, ", ")))
	}
	t := tenants[0]
	src, err := a.openSource(cmd.Context(), t, nil)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
	}
	if err := src.CheckRestore(cmd.Context(), rel); err != nil {
		switch {
		case errors.Is(err, registry.ErrNoRestore):
			return nil, withCode(exitUsage, fmt.Errorf("--file: tenant %s %w", t.Name, err))
		case errors.Is(err, sources.ErrNotFailedExport):
			return nil, withCode(exitUsage, fmt.Errorf("--file: tenant %s: %w", t.Name, err))
		}
		return nil, fmt.Errorf("--file: tenant %s: %w", t.Name, err)
	}
	return &retryFile{tenant: t.Name, rel: rel}, nil
}

// peopleFeed is the feed of a tenant's people run over the state st: with
// r for the tenant, the one export r takes back from failed/ (moved back
// when the run, under its lock, asks for its exports; the other ready files
// stay for the next run); else every ready export.
func (a *app) peopleFeed(t config.Tenant, st *store.Store, r *retryFile) (people.Feed, error) {
	if r == nil || r.tenant != t.Name {
		return a.feed(t, st, nil)
	}
	return func(ctx context.Context) ([]people.Export, error) {
		src, err := a.openSource(ctx, t, st)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		x, err := src.Restore(ctx, r.rel)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Name, err)
		}
		a.log.Info("export taken back from failed/ for this run only",
			zap.String("tenant", t.Name), zap.String("from", r.rel), zap.String("as", x.Name()))
		return []people.Export{x}, nil
	}, nil
}

// configPathOf is the configuration file as the operator named it (--config,
// else $HRSYNC_CONFIG), for the commands hrsync prints.
func configPathOf(cmd *cobra.Command) string {
	if p, _ := cmd.Flags().GetString("config"); p != "" {
		return p
	}
	return strings.TrimSpace(os.Getenv(config.EnvConfig))
}
