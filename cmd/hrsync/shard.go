package main

// `hrsync run --shard i/n`: the tenants of one shard (internal/shard).

import (
	"context"
	"fmt"
	"hrsync/internal/runner"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/shard"
	"hrsync/model"
)

// shardFlag reads --shard; a bad value is a usage error (exit 2). Commands
// without the flag run every tenant.
func shardFlag(cmd *cobra.Command) (shard.Shard, error) {
	f := cmd.Flags().Lookup("shard")
	if f == nil {
		return shard.Shard{}, nil
	}
	sh, err := shard.Parse(f.Value.String())
	if err != nil {
		return shard.Shard{}, withCode(exitUsage, fmt.Errorf("--shard: %w", err))
	}
	return sh, nil
}

// shardTenants keeps the tenants of sh, in the configuration's order.
func shardTenants(sh shard.Shard, tenants []config.Tenant) []config.Tenant {
	var out []config.Tenant
	for _, t := range tenants {
		if sh.Owns(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// emptyShard ends a run whose shard holds no tenant: exit 0, with a last
// line that says so.
func emptyShard(ctx context.Context, cmd *cobra.Command, sh shard.Shard, asJSON bool) error {
	line := fmt.Sprintf("ok: shard %s holds none of the tenants; nothing to run", sh)
	if asJSON {
		if err := printJSON(cmd.OutOrStdout(), runner.NewSummary(model.OutcomeOK, exitOK, line, nil, sh.String(), tenantNames(nil))); err != nil {
			return err
		}
	}
	finalLineOf(ctx).write(cmd.ErrOrStderr(), exitOK, line, zap.String("outcome", string(model.OutcomeOK)))
	return nil
}
