package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// The output formats of the commands that print a result (-o, --output).
const (
	outputText = "text" // for people: tables and lines
	outputJSON = "json" // for programs: one JSON document, camelCase keys, empty lists as []
)

// addOutputFlag adds -o/--output (text or json, default text) and --json,
// the older spelling of -o json, to a command that prints a result. The
// command reads the choice with outputFormat.
func addOutputFlag(cmd *cobra.Command) {
	cmd.Flags().StringP("output", "o", outputText, "output format: text or json")
	cmd.Flags().Bool("json", false, "print JSON (the same as -o json)")
	// The flag was just added: registering its completion cannot fail.
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{outputText, outputJSON}, cobra.ShellCompDirectiveNoFileComp))
}

// outputFormat returns the format a command was asked for: outputText or
// outputJSON. An unknown format, or --json with another -o, is a usage
// error (exit code 2).
func outputFormat(cmd *cobra.Command) (string, error) {
	format, err := cmd.Flags().GetString("output")
	if err != nil {
		return "", fmt.Errorf("read --output: %w", err)
	}
	asJSON, err := cmd.Flags().GetBool("json")
	if err != nil {
		return "", fmt.Errorf("read --json: %w", err)
	}
	switch format {
	case outputText, outputJSON:
	default:
		return "", withCode(exitUsage, fmt.Errorf("unknown output format %q for -o/--output: use text or json", format))
	}
	if asJSON {
		if cmd.Flags().Changed("output") && format != outputJSON {
			return "", withCode(exitUsage, fmt.Errorf("--json and -o %s disagree: use one of them", format))
		}
		return outputJSON, nil
	}
	return format, nil
}

// nonNil returns s, or an empty slice when s is nil, so that JSON prints
// an empty list as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
