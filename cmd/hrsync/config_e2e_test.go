package main_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bareConfig is a configuration with the default store (a SQLite file beside
// it) and one tenant whose drop folder is dir.
func bareConfig(dir string) string {
	return `tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      csv:
        dir: ` + dir + `
`
}

// runIn runs the binary in dir with no HRSYNC_ variable but the token, and
// returns its exit code and output.
func runIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryPath(), args...)
	cmd.Env = childEnv("HRSYNC_API_TOKEN="+e2eToken, "HRSYNC_LOG_FORMAT=json")
	cmd.Dir = dir
	res := runExec(cmd)
	if res.code < 0 {
		t.Fatalf("run hrsync %s: %s", strings.Join(args, " "), res)
	}
	return res
}

// listTree lists every path under dir, relative to it.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(dir, p); rel != "." {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadOnlyCommandsCreateNoState runs the read-only commands in a
// folder holding only a configuration and an export: each says there is no
// state yet, exits 0, and leaves the folder as it was.
func TestReadOnlyCommandsCreateNoState(t *testing.T) {
	base := t.TempDir()
	cfgDir := filepath.Join(base, "etc")
	work := filepath.Join(base, "work")
	for _, d := range []string{filepath.Join(cfgDir, "drop"), work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "hrsync.yaml"), []byte(bareConfig("drop")), 0o600); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(cfgDir, "drop", "staff.csv")
	if err := os.WriteFile(export, csvExport(genPeople(0, 3)), 0o600); err != nil {
		t.Fatal(err)
	}
	before := listTree(t, base)
	config := filepath.Join("..", "etc", "hrsync.yaml") // relative to the working directory
	statePath := filepath.Join(cfgDir, "hrsync.db")     // the default store, beside the file
	for _, args := range [][]string{
		{"status"},
		{"grants", "list"},
		{"plan"},
		{"plan", export},
		{"orders", "show", "50000000-0000-4000-8000-000000000004"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := runIn(t, work, append(args, "--config", config)...)
			want := 0
			if args[0] == "orders" {
				want = 1 // no such order, as with any state that lacks it
			}
			if res.code != want || !strings.Contains(res.stdout, "no state yet at "+statePath+"\n") {
				t.Errorf("want exit %d and \"no state yet at %s\": %s", want, statePath, res)
			}
			if after := listTree(t, base); !slices.Equal(after, before) {
				t.Errorf("the command changed the folders: %v, want %v", after, before)
			}
		})
	}
	t.Run("status --json prints JSON only", func(t *testing.T) {
		res := runIn(t, work, "status", "--json", "--config", config)
		var v map[string]any
		if res.code != 0 || json.Unmarshal([]byte(res.stdout), &v) != nil {
			t.Errorf("want exit 0 and JSON: %s", res)
		}
		if !strings.Contains(res.stderr, `"no state yet"`) {
			t.Errorf("the log does not say where the state was looked for: %s", res)
		}
		if after := listTree(t, base); !slices.Equal(after, before) {
			t.Errorf("the command changed the folders: %v", after)
		}
	})
	t.Run("migrate creates the state beside the file, and status then reads it", func(t *testing.T) {
		if res := runIn(t, work, "migrate", "--config", config); res.code != 0 {
			t.Fatalf("migrate: %s", res)
		}
		if _, err := os.Stat(statePath); err != nil {
			t.Fatalf("migrate did not create %s: %v", statePath, err)
		}
		res := runIn(t, work, "status", "--config", config)
		if res.code != 0 || strings.Contains(res.stdout, "no state yet") {
			t.Errorf("status after migrate: %s", res)
		}
	})
}

// TestDropFolderCheckedAtStart checks that the commands that use the drop
// folder refuse to start without it (exit 2, the problem at its line), that
// run fails its cycle instead (exit 1, with a run record: TestE2EOutcomes
// has the rest), and that those given FILEs or not reading it do not need it.
func TestDropFolderCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "absent")
	cfg := filepath.Join(dir, "hrsync.yaml")
	if err := os.WriteFile(cfg, []byte(bareConfig(missing)+"    schedules: {people: \"@every 1h\"}\nhttp: {listen: \"127.0.0.1:0\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "staff.csv")
	if err := os.WriteFile(export, csvExport(genPeople(0, 3)), 0o600); err != nil {
		t.Fatal(err)
	}
	problem := "tenants[0].source.csv.dir: folder " + missing + " does not exist (line 7)"
	for _, args := range [][]string{{"run", "people"}, {"run", "all"}} {
		t.Run(strings.Join(args, " ")+" fails its people cycle", func(t *testing.T) {
			res := runIn(t, dir, append(args, "--config", cfg)...)
			if res.code != 1 || !strings.Contains(res.stderr, "failed: people ") || !strings.Contains(res.stderr, missing+" does not exist") {
				t.Errorf("want exit 1 and the folder named in the last line: %s", res)
			}
		})
	}
	for _, args := range [][]string{{"daemon"}, {"config", "check"}, {"validate"}, {"plan"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			res := runIn(t, dir, append(args, "--config", cfg)...)
			if res.code != 2 || !strings.Contains(res.stderr, problem) {
				t.Errorf("want exit 2 and %q: %s", problem, res)
			}
		})
	}
	t.Run("status shows the problem and exits 0", func(t *testing.T) {
		res := runIn(t, dir, "status", "--config", cfg)
		if res.code != 0 || !strings.Contains(res.stdout, "PROBLEM") || !strings.Contains(res.stdout, "does not exist (line 7)") {
			t.Errorf("want exit 0 and the problem on stdout: %s", res)
		}
	})
	for _, args := range [][]string{{"validate", export}, {"plan", export}, {"grants", "list"}, {"config", "show"}} {
		t.Run(strings.Join(args, " ")+" needs no drop folder", func(t *testing.T) {
			if res := runIn(t, dir, append(args, "--config", cfg)...); res.code != 0 {
				t.Errorf("want exit 0: %s", res)
			}
		})
	}
}

// stateExists tells whether the env's state has been created: the SQLite
// file, or hrsync's tables in the PostgreSQL schema.
func (e *env) stateExists() bool {
	e.t.Helper()
	if e.storeKind != storePostgres {
		_, err := os.Stat(filepath.Join(e.dir, "state.db"))
		return err == nil
	}
	db, err := sql.Open("postgres", e.pgURL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	var n int
	q := "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = $1"
	if err := db.QueryRowContext(e.t.Context(), q, e.schema).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n > 0
}

// TestConfigErrorsFollowTheLogFormat: a configuration that cannot be
// loaded is said in a JSON log line (level error, exit code 2) when the
// file's log.format or HRSYNC_LOG_FORMAT asks for JSON, so that every line
// of stderr is JSON; in plain text otherwise.
func TestConfigErrorsFollowTheLogFormat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inFile := write("json.yaml", "log: {format: json}\ntenants: 3\n")
	plain := write("plain.yaml", "log: {format: console}\ntenants: 3\n")
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"log.format json in the file", nil, []string{"status", "--config", inFile}},
		{"HRSYNC_LOG_FORMAT=json", []string{"HRSYNC_LOG_FORMAT=json"}, []string{"run", "people", "--config", plain}},
		{"config check", nil, []string{"config", "check", "--config", inFile}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), binaryPath(), c.args...)
			cmd.Env = childEnv(c.env...)
			res := runExec(cmd)
			last := lastLine(t, res) // every line JSON
			if res.code != 2 || last.Level != "error" || last.ExitCode != 2 || !strings.Contains(last.Msg, "tenants: must be a list") {
				t.Errorf("want exit 2 and a JSON error line naming the problem: %s", res)
			}
		})
	}
	cmd := exec.CommandContext(t.Context(), binaryPath(), "status", "--config", plain)
	cmd.Env = childEnv()
	if res := runExec(cmd); res.code != 2 || !strings.HasPrefix(res.stderr, "hrsync: configuration ") {
		t.Errorf("log.format console: want exit 2 and a plain last line: %s", res)
	}
}
