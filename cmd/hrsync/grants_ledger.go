package main

import (
	"context"
	"fmt"
	"hrsync/sync/grants"

	"github.com/spf13/cobra"

	"hrsync/model"
	"hrsync/store"
)

// newGrantsCmd is `grants`: the ledger of grants and the operator's
// decisions about held ones.
func newGrantsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "grants",
		Short: "List the grants ledger and decide about held grants",
		Long: `A grant whose outcome is unknown (a timeout after sending, a 5xx, a crash between the call and
its commit) is held, never resent on its own. Check the person's balance on the platform, then:
  release KEY  it was NOT applied: the people sync sends it again with the next export listing
               the person (dropping the same file again is enough: only released people are
               sent); a grants rule's, with the next run grants while its day is in the look-back
  confirm KEY  it WAS applied: record it as applied
  void KEY     never send it
Each grant belongs to the job and rule that made it (the people sync's initial balance: job people,
rule initial; a grants rule: job grants, rule NAME). --job and --rule narrow the list, and make a
decision refuse a key of another job or rule.`,
	}
	cmd.AddCommand(newGrantsListCmd(),
		newGrantDecisionCmd("release", "released", "Record that held grants were NOT applied, so they are sent again (the people sync's with the next export listing their people, a grants rule's with the next run grants)",
			func(ctx context.Context, st *store.Store, k, n string) error { return st.ReleaseGrant(ctx, k, n) }),
		newGrantDecisionCmd("confirm", "confirmed", "Record that held grants WERE applied on the platform",
			func(ctx context.Context, st *store.Store, k, n string) error { return st.ConfirmGrant(ctx, k, n) }),
		newGrantDecisionCmd("void", "voided", "Record that grants must never be sent",
			func(ctx context.Context, st *store.Store, k, n string) error { return st.VoidGrant(ctx, k, n) }),
	)
	return cmd
}

// newGrantsListCmd is `grants list`: the ledger, by default its held grants.
func newGrantsListCmd() *cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "List grants (default: the held ones)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withReadOnly(cmd, true, func(ro readOnly) error {
				f := store.GrantFilter{}
				f.Tenant, _ = cmd.Flags().GetString("tenant")
				states, _ := cmd.Flags().GetStringSlice("state")
				for _, s := range states {
					f.States = append(f.States, model.GrantState(s))
				}
				var err error
				if f.Job, f.Reason, err = grantScope(cmd); err != nil {
					return err
				}
				list, err := ro.st.ListGrants(cmd.Context(), f)
				if err != nil {
					return err
				}
				if ro.asJSON {
					return printJSON(cmd.OutOrStdout(), nonNil(list))
				}
				return grants.PrintLedger(cmd.OutOrStdout(), list)
			})
		},
	}
	addConfigFlags(list)
	addOutputFlag(list)
	list.Flags().StringSlice("state", []string{string(model.GrantUnknown), string(model.GrantPending)}, "states to list (pending, applied, not_applied, unknown, voided)")
	addScopeFlags(list)
	return list
}

// newGrantDecisionCmd is `grants release|confirm|void KEY...`: do records an
// operator's decision about each key, within the --job and --rule scope.
func newGrantDecisionCmd(use, done, short string, do func(ctx context.Context, st *store.Store, key, note string) error) *cobra.Command {
	c := &cobra.Command{
		Use:   use + " KEY...",
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, keys []string) error {
			_, st, err := loadAppStore(cmd)
			if err != nil {
				return err
			}
			note, _ := cmd.Flags().GetString("note")
			defer st.Close() //nolint:errcheck // each decision is committed on its own
			job, rule, err := grantScope(cmd)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if err := grants.InScope(cmd.Context(), st, k, job, rule); err != nil {
					return err
				}
				if err := do(cmd.Context(), st, k, note); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", k, done)
			}
			return nil
		},
	}
	addConfigFlags(c)
	addScopeFlags(c)
	c.Flags().String("note", "", "why (kept in the ledger)")
	return c
}
