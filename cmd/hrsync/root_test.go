package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// execRoot runs `hrsync <args>` in process and returns its stdout, its
// stderr with the error main would print, and the exit code.
func execRoot(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		errOut.WriteString("hrsync: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), exitCode(err)
}

// groups returns the path of every command of the tree that groups
// subcommands, the root included.
func groups(root *cobra.Command) [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		// A command that runs itself with arguments (plan [FILE...], with
		// its subcommand plan grants) reads an unknown word as an argument.
		if c.HasSubCommands() && !takesArgs(path) {
			out = append(out, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(root, nil)
	return out
}

// takesArgs tells the commands with subcommands that run themselves with
// arguments: `plan [FILE...]` beside `plan grants`.
func takesArgs(path []string) bool { return strings.Join(path, " ") == "plan" }

// leaves returns the path of every command without subcommands, and of
// every runnable command with some (plan).
func leaves(root *cobra.Command) [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if !c.HasSubCommands() || takesArgs(path) {
			out = append(out, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(root, nil)
	return out
}

func TestUnknownCommandsExit2WithSuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "peoples"}, `unknown command "peoples" for "hrsync run"; did you mean people?`},
		{[]string{"run", "peple", "--config", "x.yaml", "--override-safeguards"}, "did you mean people?"},
		{[]string{"run", "order"}, "did you mean orders?"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "hrsync"; its commands: `},
		{[]string{"statsu"}, "did you mean status?"},
		{[]string{"grants", "lst"}, "did you mean list?"},
		{[]string{"grants", "relase", "KEY"}, "did you mean release?"},
		{[]string{"config", "chek"}, "did you mean check?"},
		{[]string{"config", "bogus"}, "its commands: check, show"},
		{[]string{"orders", "shw", "ORDER"}, "did you mean show?"},
		{[]string{"product", "gte"}, "did you mean get?"},
		{[]string{"completion", "bsh"}, "did you mean bash or fish or zsh?"},
		{[]string{"help", "run", "peoples"}, "did you mean people?"},
		{[]string{"help", "vresion"}, "did you mean version?"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := execRoot(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
			}
			if stdout != "" {
				t.Errorf("a usage error printed on stdout:\n%s", stdout)
			}
		})
	}
}

// TestEveryGroupRejectsAnUnknownSubcommand walks the whole tree, so that a
// group added later is covered too.
func TestEveryGroupRejectsAnUnknownSubcommand(t *testing.T) {
	all := groups(newRootCmd())
	if len(all) < 7 { // hrsync, run, grants, config, orders, product, completion
		t.Fatalf("found %d groups: %v", len(all), all)
	}
	for _, path := range all {
		args := append(append([]string{}, path...), "zzzz")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, stderr, code := execRoot(t, args...)
			if code != exitUsage || !strings.Contains(stderr, `unknown command "zzzz"`) {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
		})
	}
}

func TestGroupWithoutSubcommandExits2(t *testing.T) {
	for _, group := range []string{"run", "grants", "config", "orders", "product"} {
		t.Run(group, func(t *testing.T) {
			stdout, stderr, code := execRoot(t, group)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "hrsync: hrsync "+group+" needs a subcommand: ") {
				t.Errorf("last line %q", last)
			}
			if !strings.Contains(stderr, "Available Commands:") || stdout != "" {
				t.Errorf("the help goes to stderr; stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
	t.Run("hrsync alone prints its help and exits 0", func(t *testing.T) {
		stdout, _, code := execRoot(t)
		if code != exitOK || !strings.Contains(stdout, "Available Commands:") {
			t.Errorf("exit %d, stdout:\n%s", code, stdout)
		}
	})
	t.Run("a group's usage shows no command line of its own", func(t *testing.T) {
		stdout, _, code := execRoot(t, "run", "--help")
		if code != exitOK || strings.Contains(stdout, "hrsync run [flags]") || !strings.Contains(stdout, "hrsync run [command]") {
			t.Errorf("exit %d, stdout:\n%s", code, stdout)
		}
	})
}

func TestUnknownFlagsExit2(t *testing.T) {
	for _, path := range leaves(newRootCmd()) {
		args := append(append([]string{}, path...), "--zzzz")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, stderr, code := execRoot(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "unknown flag: --zzzz") {
				t.Errorf("exit %d, stderr:\n%s", code, stderr)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--confg", "x.yaml"}, "unknown flag: --confg; did you mean --config?"},
		{[]string{"run", "people", "--override-safeguard"}, "did you mean --override-safeguards?"},
		{[]string{"grants", "list", "--stat", "applied"}, "did you mean --state?"},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"status", "-x"}, "unknown shorthand flag: 'x' in -x"},
		{[]string{"status", "--output"}, "flag needs an argument: --output"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := execRoot(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q; stderr:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

func TestWrongArgumentCountsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"orders", "show"}, "hrsync orders show accepts 1 arg(s), received 0; usage: hrsync orders show ORDER_ID"},
		{[]string{"orders", "show", "a", "b"}, "accepts 1 arg(s), received 2"},
		{[]string{"product", "get", "c"}, "hrsync product get accepts 2 arg(s), received 1; usage: hrsync product get COLLECTION PRODUCT"},
		{[]string{"grants", "release"}, "requires at least 1 arg(s), only received 0"},
		{[]string{"grants", "list", "extra"}, `hrsync grants list takes no arguments, got "extra"`},
		{[]string{"run", "people", "extra"}, `hrsync run people takes no arguments, got "extra"`},
		{[]string{"status", "extra"}, "takes no arguments"},
		{[]string{"daemon", "extra"}, "takes no arguments"},
		{[]string{"version", "extra"}, "takes no arguments"},
		{[]string{"config", "show", "extra"}, "takes no arguments"},
		{[]string{"migrate", "extra"}, "takes no arguments"},
		{[]string{"emulator", "extra"}, "takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := execRoot(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q; stderr:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		stdout, _, code := execRoot(t, args...)
		if code != exitOK || stdout != "hrsync "+version+"\n" {
			t.Errorf("%v: exit %d, stdout %q", args, code, stdout)
		}
	}
	for _, args := range [][]string{{"version", "-o", "json"}, {"version", "--output=json"}, {"version", "--json"}} {
		stdout, _, code := execRoot(t, args...)
		var v struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal([]byte(stdout), &v); code != exitOK || err != nil || v.Version != version {
			t.Errorf("%v: exit %d, %v, stdout %q", args, code, err, stdout)
		}
	}
}

func TestOutputFormat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{nil, outputText, exitOK},
		{[]string{"-o", "text"}, outputText, exitOK},
		{[]string{"-o", "json"}, outputJSON, exitOK},
		{[]string{"--output", "json"}, outputJSON, exitOK},
		{[]string{"--json"}, outputJSON, exitOK},
		{[]string{"--json", "-o", "json"}, outputJSON, exitOK},
		{[]string{"-o", "yaml"}, "", exitUsage},
		{[]string{"-o", "JSON"}, "", exitUsage},
		{[]string{"--json", "-o", "text"}, "", exitUsage},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := &cobra.Command{Use: "x"}
			addOutputFlag(cmd)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := outputFormat(cmd)
			if got != tc.want || exitCode(err) != tc.code {
				t.Errorf("got %q, %v (exit %d); want %q, exit %d", got, err, exitCode(err), tc.want, tc.code)
			}
		})
	}
	t.Run("a command rejects an unknown format before doing anything", func(t *testing.T) {
		_, stderr, code := execRoot(t, "status", "-o", "yaml", "--config", "does-not-exist.yaml")
		if code != exitUsage || !strings.Contains(stderr, `unknown output format "yaml"`) {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
}
