//go:build !unix

package csvsrc

import (
	"testing"
	"time"
)

// cpuTime is 0 where the CPU time of the process is not read: the
// benchmark's CPU ratios are then NaN.
func cpuTime(*testing.B) time.Duration { return 0 }
