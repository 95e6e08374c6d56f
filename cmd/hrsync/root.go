package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "hrsync",
		Short: "Keep a company's people on the gifting platform in step with its HR system",
		Long: `hrsync reads HR exports (CSV drop folder or SQL query), creates new people on the
gifting platform with their balances exactly once, personalizes collections for new
hires, and polls orders into reporting tables.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(exitUsage, err) })
	root.AddCommand(
		newVersionCmd(),
		newConfigCmd(),
		newValidateCmd(),
		newPlanCmd(),
		newRunCmd(),
		newGrantsCmd(),
		newMigrateCmd(),
		newEmulatorCmd(),
		newOrdersCmd(), newProductCmd(),
		newDaemonCmd(), newStatusCmd(),
	)
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print hrsync's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "hrsync", version)
			return err
		},
	}
}
