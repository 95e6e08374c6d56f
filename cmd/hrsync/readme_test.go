package main_test

// Claims of README.md that a test can check, checked against the script
// and the binary they describe: the demo's steps, the order `run all`
// runs the jobs in, and that every command the Commands table shows
// without --config runs without one.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"hrsync/internal/emutest"
)

// readme returns README.md's text.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// subcommand returns the leading lowercase words of a command line after
// the binary: "run people" of "run people --config F".
func subcommand(fields []string) string {
	var words []string
	for _, f := range fields {
		if !regexp.MustCompile(`^[a-z]+$`).MatchString(f) {
			break
		}
		words = append(words, f)
	}
	return strings.Join(words, " ")
}

// TestREADMEDemoSteps wants the README's account of `make demo` to name
// the hrsync commands examples/demo.sh runs, in the order it runs them.
func TestREADMEDemoSteps(t *testing.T) {
	text := readme(t)
	start := strings.Index(text, "`make demo` (the script is `examples/demo.sh`)")
	if start < 0 {
		t.Fatal("README.md has no paragraph starting \"`make demo` (the script is `examples/demo.sh`)\"")
	}
	para, _, _ := strings.Cut(text[start:], "\n\n")
	var told []string
	for _, m := range regexp.MustCompile("`hrsync ([^`]+)`").FindAllStringSubmatch(para, -1) {
		told = append(told, subcommand(strings.Fields(m[1])))
	}

	script, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	sc := bufio.NewScanner(bytes.NewReader(script))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		_, rest, ok := strings.Cut(line, `"$BIN" `)
		if !ok {
			continue
		}
		if cmd := subcommand(strings.Fields(rest)); cmd != "" && (len(ran) == 0 || ran[len(ran)-1] != cmd) {
			ran = append(ran, cmd)
		}
	}
	if len(ran) < 3 {
		t.Fatalf("found %v in examples/demo.sh, want the commands it runs", ran)
	}
	if !slices.Equal(told, ran) {
		t.Errorf("README.md says the demo runs\n  %s\nexamples/demo.sh runs\n  %s", strings.Join(told, ", "), strings.Join(ran, ", "))
	}
}

// TestREADMERunAllOrder runs `run all` on the demo's configuration and
// export against the emulator, and wants the jobs in its log in the order
// README.md gives ("`run all` runs the jobs this build has, people first,
// then ...").
func TestREADMERunAllOrder(t *testing.T) {
	m := regexp.MustCompile("`run all` runs the jobs this build\\s+has, (\\w+) first, then ([\\w, ]+?) and (\\w+)\\.").FindStringSubmatch(readme(t))
	if m == nil {
		t.Fatal("README.md no longer says \"`run all` runs the jobs this build has, X first, then Y, Z and W.\": update this test with it")
	}
	told := append([]string{m[1]}, append(strings.Split(m[2], ", "), m[3])...)

	_, baseURL := emutest.Serve(t)

	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	export, err := os.ReadFile(filepath.Join("..", "..", "examples", "exports", "employees.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dropfolder"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"hrsync.yaml": cfg, filepath.Join("dropfolder", "employees.csv"): export} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryPath(), "run", "all", "--config", filepath.Join(dir, "hrsync.yaml"))
	cmd.Env = childEnv("HRSYNC_API_TOKEN="+emutest.Token, "HRSYNC_API_BASE_URL="+baseURL,
		"HRSYNC_LOG_FORMAT=json", "HRSYNC_LOG_LEVEL=info")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run all: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var ran []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		var entry struct {
			Job string `json:"job"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Job != "" && !slices.Contains(ran, entry.Job) {
			ran = append(ran, entry.Job)
		}
	}
	if !slices.Equal(told, ran) {
		t.Errorf("README.md says run all runs %v; its log shows %v\nstderr:\n%s", told, ran, stderr.String())
	}
}

// TestREADMECommandsWithoutConfig runs each command the Commands table
// shows without --config as shown (placeholders filled in), with no
// configuration anywhere: none may stop for want of one.
func TestREADMECommandsWithoutConfig(t *testing.T) {
	row := regexp.MustCompile("(?m)^\\| `hrsync ([^`]+)`")
	checked := 0
	for _, m := range row.FindAllStringSubmatch(readme(t), -1) {
		shown := strings.ReplaceAll(m[1], `\|`, "|")
		if strings.Contains(shown, "--config") || strings.Contains(shown, " ... ") ||
			strings.HasPrefix(shown, "emulator") || strings.HasPrefix(shown, "daemon") {
			continue // the emulator and the daemon serve until stopped
		}
		shown = regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(shown, "")
		shown, _, _ = strings.Cut(shown, ",") // "version [-o json], hrsync --version"
		var args []string
		for _, f := range strings.Fields(shown) {
			f, _, _ = strings.Cut(f, "|") // the first of alternatives
			if regexp.MustCompile(`^[A-Z_]+(\.\.\.)?$`).MatchString(f) {
				f = "x" // a placeholder
			}
			args = append(args, f)
		}
		checked++
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binaryPath(), args...)
			cmd.Dir = t.TempDir()
			cmd.Env = childEnv()
			out, _ := cmd.CombinedOutput()
			if strings.Contains(string(out), "no configuration file") {
				t.Errorf("README.md shows `hrsync %s` without --config, but it needs one:\n%s", m[1], out)
			}
		})
	}
	if checked == 0 {
		t.Fatal("no row of README.md's Commands table without --config was found")
	}
}
