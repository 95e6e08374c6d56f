package proc_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"hrsync/internal/bench/proc"
)

// helperEnv makes the test binary act as a child: it touches the number
// of MiB the variable gives, prints a line and exits with the code of
// helperExitEnv.
const (
	helperEnv     = "PROC_TEST_HELPER_MIB"
	helperExitEnv = "PROC_TEST_HELPER_EXIT"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == proc.LauncherArg {
		os.Exit(proc.Launch(context.Background(), os.Args[2:]))
	}
	if v := os.Getenv(helperEnv); v != "" {
		os.Exit(helper(v))
	}
	os.Exit(m.Run())
}

func helper(v string) int {
	mib, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad size:", err)
		return 2
	}
	buf := make([]byte, mib*proc.MiB)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i)
	}
	sum := 0
	for i := 0; i < len(buf); i += 4096 {
		sum += int(buf[i])
	}
	fmt.Printf("touched %d MiB (%d)\n", mib, sum%7)
	if code := os.Getenv(helperExitEnv); code != "" {
		fmt.Fprintln(os.Stderr, "helper failing on purpose")
		n, _ := strconv.Atoi(code)
		return n
	}
	return 0
}

func runHelper(t *testing.T, mib int, exit string) (proc.Measurement, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("executable: %v", err)
	}
	env := append(os.Environ(), helperEnv+"="+strconv.Itoa(mib), helperExitEnv+"="+exit)
	return proc.Run(context.Background(), self, env, self, "-test.run=^$")
}

func TestRun(t *testing.T) {
	t.Run("peak memory is the child's own", func(t *testing.T) {
		small, err := runHelper(t, 8, "")
		if err != nil {
			t.Fatalf("small child: %v", err)
		}
		big, err := runHelper(t, 160, "")
		if err != nil {
			t.Fatalf("big child: %v", err)
		}
		if big.PeakRSS < 160*proc.MiB {
			t.Errorf("child touching 160 MiB peaked at %.1f MiB", big.PeakMiB())
		}
		if diff := big.PeakRSS - small.PeakRSS; diff < 140*proc.MiB {
			t.Errorf("peaks differ by %.1f MiB, want about 152", float64(diff)/proc.MiB)
		}
		if !strings.HasPrefix(string(big.Stdout), "touched 160 MiB") {
			t.Errorf("stdout = %q", big.Stdout)
		}
		if big.Wall <= 0 || big.User+big.System <= 0 {
			t.Errorf("times not measured: wall %v, cpu %v", big.Wall, big.User+big.System)
		}
	})
	t.Run("the parent's memory is not the child's", func(t *testing.T) {
		// Linux keeps a process's peak from before execve in ru_maxrss:
		// without the launcher, this child would report the parent's 256 MiB.
		held := make([]byte, 256*proc.MiB)
		for i := 0; i < len(held); i += 4096 {
			held[i] = 1
		}
		m, err := runHelper(t, 8, "")
		runtime.KeepAlive(held)
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		if m.PeakRSS > 100*proc.MiB {
			t.Errorf("child touching 8 MiB peaked at %.1f MiB while its parent held 256 MiB", m.PeakMiB())
		}
	})
	t.Run("a failing child quotes its stderr", func(t *testing.T) {
		m, err := runHelper(t, 1, "3")
		if err == nil {
			t.Fatal("no error for exit code 3")
		}
		if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "helper failing on purpose") {
			t.Errorf("err = %v", err)
		}
		if m.PeakRSS == 0 {
			t.Error("a failed run still has its peak memory")
		}
	})
	t.Run("a missing program", func(t *testing.T) {
		self, _ := os.Executable()
		_, err := proc.Run(context.Background(), self, nil, "/nonexistent/hrsync-bench-child")
		if err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		self, _ := os.Executable()
		if _, err := proc.Run(ctx, self, nil, self, "-test.run=^$"); err == nil {
			t.Error("no error with a cancelled context")
		}
	})
}
