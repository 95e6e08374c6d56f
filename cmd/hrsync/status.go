package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"hrsync/config"
	"hrsync/internal/status"
	"hrsync/sources/registry"
	"hrsync/store"
)

func newStatusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the last run of each job and tenant, held grants and the files waiting",
		Long: `status reads hrsync's state and each tenant's drop folder and prints the last run of each job
and tenant with its outcome, age and cause, each tenant's source problem (a drop folder that cannot
be listed, a secret variable not set), the grants held for an operator, the files waiting in the
drop folder and those archived as processed or failed, the personalizations pending and the orders
whose status is still polled. It changes nothing and makes no API call.

The text fits 100 columns: long names and causes are cut. With --tenant it adds each run's and
each source problem's full text; -o json has everything.

Exit codes: 0 when the state was read, whatever the runs' outcomes and the sources' problems;
1 when the state cannot be read; 2 for a usage or configuration error outside the tenants' sources.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withReadOnly(cmd, false, func(ro readOnly) error {
				rep, err := buildStatus(cmd.Context(), ro.st, ro.tenants)
				if err != nil {
					return err
				}
				if ro.asJSON {
					return printJSON(cmd.OutOrStdout(), rep)
				}
				return status.Print(cmd.OutOrStdout(), rep, status.PrintOptions{Now: time.Now(), Details: cmd.Flags().Changed("tenant")})
			})
		},
	}
	addConfigFlags(cmd)
	addOutputFlag(cmd)
	return cmd
}

// buildStatus reads the state and the drop folders of the tenants.
func buildStatus(ctx context.Context, st *store.Store, tenants []config.Tenant) (*status.Report, error) {
	return status.Build(ctx, st, tenants, folderFiles)
}

// folderFiles counts the files waiting in a tenant's drop folder (without
// waiting for them to be stable), those archived in processed/ and failed/
// and those placed in approve/, whatever backend holds it; nil for a
// source without a folder.
func folderFiles(ctx context.Context, t config.Tenant) (*status.Files, error) {
	if !hasFolder(t) {
		return nil, nil
	}
	folder, err := openFolder(ctx, t)
	if err != nil {
		return nil, err
	}
	n, err := folder.Count(ctx)
	if err != nil {
		return nil, err
	}
	return &status.Files{Waiting: n.Waiting, Processed: n.Processed, Failed: n.Failed, Approve: n.Approve}, nil
}

// hasFolder tells whether a tenant's source is a drop folder.
func hasFolder(t config.Tenant) bool {
	o, err := registry.Of(t.Source.Options)
	return err == nil && o.HasFolder()
}
