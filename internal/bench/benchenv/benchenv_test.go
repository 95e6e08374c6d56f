package benchenv_test

import (
	"testing"

	"hrsync/internal/bench/benchenv"
)

// TestCount: unset gives the default, a positive number is read.
func TestCount(t *testing.T) {
	const name = "HRSYNC_BENCHENV_TEST_COUNT"
	if got := benchenv.Count(t, name, 7); got != 7 {
		t.Errorf("unset: %d, want the default 7", got)
	}
	t.Setenv(name, "250")
	if got := benchenv.Count(t, name, 7); got != 250 {
		t.Errorf("250 set: %d", got)
	}
}
