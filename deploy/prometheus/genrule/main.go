// Command genrule writes the PrometheusRule of a plain Prometheus rules
// file: genrule RULES OUT (go generate ./deploy/prometheus).
package main

import (
	"fmt"
	"os"

	"hrsync/deploy/prometheus"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genrule:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: genrule RULES OUT")
	}
	plain, err := os.ReadFile(args[0]) //nolint:gosec // go generate names the rules file to read
	if err != nil {
		return fmt.Errorf("read rules: %w", err)
	}
	out, err := prometheus.RenderPrometheusRule(plain)
	if err != nil {
		return err
	}
	if err := os.WriteFile(args[1], out, 0o644); err != nil { //nolint:gosec // a manifest, world-readable like the rest of the repository
		return fmt.Errorf("write %s: %w", args[1], err)
	}
	return nil
}
