// Package benchenv reads a benchmark's sizes from the environment, so that
// a plain `go test -bench` stays short and `make bench` (or an operator)
// asks for the sizes an issue names.
package benchenv

import (
	"os"
	"strconv"
	"testing"
)

// Count returns the positive count the environment variable name holds,
// or def when it is unset; any other value fails tb.
func Count(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
