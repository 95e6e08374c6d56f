package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// suggestionDistance is the largest edit distance at which a mistyped
// command or flag gets a "did you mean" suggestion.
const suggestionDistance = 2

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "hrsync",
		Short: "Keep a company's people on the gifting platform in step with its HR system",
		Long: `hrsync reads HR exports (CSV drop folder or SQL query), creates new people on the
gifting platform with their balances exactly once, personalizes collections for new
hires, and polls orders into reporting tables.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("hrsync {{.Version}}\n")
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
	strictUsage(root)
	return root
}

// strictUsage makes every usage mistake a usage error (exit code 2) with a
// suggestion where one fits: an unknown command or subcommand, an unknown
// flag, a wrong number of arguments, a group called without its
// subcommand. Cobra on its own prints the help and exits 0 for a group
// given an unknown subcommand, and returns plain errors for the rest.
//
// It adds cobra's completion and help commands first, so that they are
// covered too. A leaf command that sets no Args takes no arguments.
func strictUsage(root *cobra.Command) {
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(flagError)
	// A group runs (to reject what follows it), but its usage shows only
	// "CMD [command]", not a command line of its own.
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(),
		"{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = suggestionDistance
		if c.HasSubCommands() {
			if c.Run == nil && c.RunE == nil {
				c.Args = cobra.ArbitraryArgs
				c.RunE = runGroup
			}
		} else {
			c.Args = usageArgs(c.Args)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// runGroup runs a command that only groups subcommands: an argument is an
// unknown subcommand; without one, the root prints its help and any other
// group says which subcommands it has.
func runGroup(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	if !cmd.HasParent() {
		return cmd.Help()
	}
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Help()
	return withCode(exitUsage, fmt.Errorf("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(subcommandNames(cmd), ", ")))
}

// subcommandNames lists the names of cmd's available subcommands.
func subcommandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// unknownCommand is the usage error for a subcommand cmd does not have,
// with the closest names it has.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	} else {
		msg += "; its commands: " + strings.Join(subcommandNames(cmd), ", ")
	}
	return withCode(exitUsage, fmt.Errorf("%s (run '%s --help' for usage)", msg, cmd.CommandPath()))
}

// usageArgs wraps a command's argument check so that a wrong argument
// count is a usage error that shows the command line; nil (cobra's
// default, which lets a leaf take anything) becomes cobra.NoArgs.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil || reflect.ValueOf(check).Pointer() == reflect.ValueOf(cobra.NoArgs).Pointer() {
		check = noArgs // cobra's calls an argument an unknown command
	}
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			// cobra's messages read after the command: "accepts 1 arg(s), received 0"
			return withCode(exitUsage, fmt.Errorf("%s %w; usage: %s", cmd.CommandPath(), err, cmd.UseLine()))
		}
		return nil
	}
}

// noArgs rejects any argument.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments, got %q", args[0])
	}
	return nil
}

// flagError makes a flag the command does not know, or a bad flag value, a
// usage error. A group given an unknown subcommand and a flag of that
// subcommand (`hrsync run peoples --config F`) fails on the flag: the
// unknown subcommand is the error to report then.
func flagError(cmd *cobra.Command, err error) error {
	if cmd.HasSubCommands() {
		if args := cmd.Flags().Args(); len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
	}
	var notExist *pflag.NotExistError
	if errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() == "" {
		if s := closestFlag(cmd, notExist.GetSpecifiedName()); s != "" {
			err = fmt.Errorf("%w; did you mean --%s?", err, s)
		}
	}
	return withCode(exitUsage, fmt.Errorf("%w (run '%s --help' for usage)", err, cmd.CommandPath()))
}

// closestFlag returns the name of cmd's flag nearest to name, when one is
// within suggestionDistance edits; "" otherwise.
func closestFlag(cmd *cobra.Command, name string) string {
	best, bestDist := "", suggestionDistance+1
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(name), f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// newHelpCmd replaces cobra's help command, which prints the usage and
// exits 0 for a topic it does not know.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil {
				return withCode(exitUsage, err)
			}
			if len(rest) > 0 {
				return unknownCommand(target, rest[0])
			}
			target.SetOut(cmd.OutOrStdout())
			return target.Help()
		},
	}
}

func newVersionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print hrsync's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(cmd)
			if err != nil {
				return err
			}
			if format == outputJSON {
				return printJSON(cmd.OutOrStdout(), versionOutput{Version: version})
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), "hrsync", version)
			return err
		},
	}
	addOutputFlag(cmd)
	return cmd
}

// versionOutput is what `hrsync version -o json` prints.
type versionOutput struct {
	Version string `json:"version"`
}
