package main_test

// The outcome model (DESIGN.md, invariant 7) end to end: for each way a
// people run can fail, the real binary's exit code, its last line on
// stderr and the run record agree, and a run that granted nothing because
// the platform refused it is failed, never attention.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lastStderrLine is the last line the binary wrote on stderr, decoded when
// it is a JSON log line (the test configurations log JSON).
type lastStderrLine struct {
	Level    string `json:"level"`
	Msg      string `json:"msg"`
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exitCode"`
}

// lastLine decodes the last line of a run's stderr and checks that every
// line before it is a JSON log line too.
func lastLine(t *testing.T, res result) lastStderrLine {
	t.Helper()
	var last lastStderrLine
	n := 0
	sc := bufio.NewScanner(strings.NewReader(res.stderr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		var l lastStderrLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stderr line %d is not JSON (%v): %q", n, err, sc.Text())
		}
		var fields map[string]any
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil || fields["stacktrace"] != nil || fields["stack"] != nil {
			t.Errorf("stderr line %d carries a stack trace: %q", n, sc.Text())
		}
		last = l
	}
	if n == 0 {
		t.Fatalf("nothing on stderr: %s", res)
	}
	return last
}

// lastRun is the newest people run's record.
func (e *env) lastRun() (outcome, errText string) {
	e.t.Helper()
	var msg *string
	row := e.stateDB().QueryRowContext(e.t.Context(),
		e.rebind(`SELECT outcome, error FROM runs WHERE job = 'people' ORDER BY started_at DESC LIMIT 1`))
	if err := row.Scan(&outcome, &msg); err != nil {
		e.t.Fatalf("read the last run record: %v", err)
	}
	if msg != nil {
		errText = *msg
	}
	return outcome, errText
}

// runEnv runs the binary with extra environment variables over the test's.
func (e *env) runEnv(extra []string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Env = append(cmd.Env, extra...)
	res := runExec(cmd)
	if res.code < 0 {
		e.t.Fatalf("run hrsync %s: %s", strings.Join(args, " "), res)
	}
	return res
}

// editConfig replaces old by new in the test's configuration file.
func (e *env) editConfig(old, new string) {
	e.t.Helper()
	b, err := os.ReadFile(e.config)
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		e.t.Fatalf("the configuration has no %q", old)
	}
	if err := os.WriteFile(e.config, []byte(strings.ReplaceAll(string(b), old, new)), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func TestE2EOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// setup breaks the world and returns extra environment variables.
		setup func(t *testing.T, e *env) []string
		// lineHas are phrases the last line holds (cause and next step).
		lineHas []string
		// calls is how many createPeople calls the emulator must have seen.
		calls int
		// archived tells whether the export left the drop folder.
		archived bool
	}{
		{
			name:    "wrong token (401)",
			setup:   func(*testing.T, *env) []string { return []string{"HRSYNC_API_TOKEN=not-the-token"} },
			lineHas: []string{"the platform refused the token (401 unauthorized) on 1 createPeople call; nothing was granted; 20 people not sent", "check HRSYNC_API_TOKEN"},
			calls:   1,
		},
		{
			name: "a company the token may not act for (403)",
			setup: func(_ *testing.T, e *env) []string {
				e.editConfig("companyId: "+e.company, "companyId: 9f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9")
				return nil
			},
			lineHas: []string{"the platform refused the company for this token (403 forbidden) on 1 createPeople call; nothing was granted; 20 people not sent", "companyId"},
			calls:   1,
		},
		{
			name:    "nothing listens at the API's address",
			setup:   func(*testing.T, *env) []string { return []string{"HRSYNC_API_BASE_URL=http://127.0.0.1:1"} },
			lineHas: []string{"the platform could not be reached on 2 createPeople calls (every call of the run); nothing was granted", "api.baseUrl"},
		},
		{
			name: "every batch refused as invalid (400)",
			setup: func(t *testing.T, e *env) []string {
				e.emu.addFault(t, fault{Operation: "createPeople", Status: 400})
				return nil
			},
			lineHas: []string{"the platform refused the request as invalid on 2 createPeople calls (every call of the run); nothing was granted"},
			calls:   2,
		},
		{
			name: "the drop folder is missing",
			setup: func(t *testing.T, e *env) []string {
				if err := os.RemoveAll(e.drop); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			lineHas: []string{"read the source", "drop folder", "check the tenant's source"},
		},
		{
			name: "the drop folder cannot be listed (not a directory)",
			setup: func(t *testing.T, e *env) []string {
				if err := os.RemoveAll(e.drop); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(e.drop, []byte("not a folder"), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			lineHas: []string{"read the source", "is not a folder", "check the tenant's source"},
		},
		{
			name: "the SQL source's database is down",
			setup: func(_ *testing.T, e *env) []string {
				dsn := filepath.Join(e.dir, "hr-dsn")
				if err := os.WriteFile(dsn, []byte("postgres://nobody@127.0.0.1:1/hr?sslmode=disable&connect_timeout=2"), 0o600); err != nil {
					t.Fatal(err)
				}
				e.editConfig("      csv:\n        dir: "+e.drop+"\n        stableFor: 1ms\n",
					"      sql:\n        driver: postgres\n        dsnFile: "+dsn+"\n        query: SELECT 1 AS employee_id\n")
				return nil
			},
			lineHas: []string{"read the source", "check the tenant's source"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// One call at a time, so that a refused token stops the run
			// before its second batch.
			e := newEnv(t, configOptions{maxAttempts: 2, batchSize: 20, concurrency: 1})
			e.dropFile("employees.csv", csvExport(genPeople(1, 41)))
			extra := c.setup(t, e)
			e.emu.clearRequests(t)
			res := e.runEnv(extra, "run", "people")
			if res.code != 1 {
				t.Fatalf("want exit 1 (failed), got %s", res)
			}
			last := lastLine(t, res)
			t.Logf("last line: %s", last.Msg)
			if last.Level != "error" || last.Outcome != "failed" || last.ExitCode != 1 || !strings.HasPrefix(last.Msg, "failed: people "+tenantName+": ") {
				t.Errorf("last line = %+v, want an error line starting %q", last, "failed: people "+tenantName+": ")
			}
			for _, want := range c.lineHas {
				if !strings.Contains(last.Msg, want) {
					t.Errorf("last line %q does not say %q", last.Msg, want)
				}
			}
			if strings.Contains(res.stderr, "not-the-token") || strings.Contains(res.stderr, e2eToken) {
				t.Errorf("a token reached stderr")
			}
			outcome, errText := e.lastRun()
			if outcome != "failed" || errText == "" {
				t.Errorf("run record: outcome %q, error %q; want failed with its cause", outcome, errText)
			}
			if got := countOp(e.emu.requests(t), "createPeople"); got != c.calls {
				t.Errorf("the emulator saw %d createPeople calls, want %d", got, c.calls)
			}
			if n := len(e.emu.people(t, e.company)); n != 0 {
				t.Errorf("%d people exist at the emulator after a failed run", n)
			}
			if _, err := os.Stat(filepath.Join(e.drop, "employees.csv")); c.calls > 0 && err != nil {
				t.Errorf("the export left the drop folder after a failed run: %v", err)
			}
			if held := e.grants(); len(held) != 0 {
				t.Errorf("%d grants held after a run the platform refused: %+v", len(held), held)
			}
		})
	}
}

// TestE2EOutcomeAttentionAndOK checks the two outcomes of a run that did its
// work: attention when rows were rejected, with the cause counting them,
// then ok for a clean export, each with its last line and run record.
func TestE2EOutcomeAttentionAndOK(t *testing.T) {
	t.Parallel()
	e := newEnv(t, configOptions{})
	export := csvExport(genPeople(1, 11))
	export = append(export, []byte("P99999,not-an-email,Bad,Row,Sales,Lisbon,2020-01-01,1990-01-01,10\n")...)
	e.dropFile("a.csv", export)
	res := e.mustRun(4, "run", "people")
	last := lastLine(t, res)
	for _, want := range []string{"attention: people " + tenantName + ": a.csv: 10 people created", "1 row rejected", "see the run's report"} {
		if !strings.Contains(last.Msg, want) {
			t.Errorf("last line %q does not say %q", last.Msg, want)
		}
	}
	if last.Level != "warn" || last.ExitCode != 4 {
		t.Errorf("last line = %+v, want warn with exit code 4", last)
	}
	if outcome, _ := e.lastRun(); outcome != "attention" {
		t.Errorf("run record outcome %q, want attention", outcome)
	}
	if strings.Contains(res.stderr, "not-an-email") {
		t.Errorf("a rejected value reached stderr")
	}

	e.dropFile("b.csv", csvExport(genPeople(1, 16)))
	res = e.mustRun(0, "run", "people")
	last = lastLine(t, res)
	if want := "ok: people " + tenantName + ": b.csv: 5 people created"; !strings.HasPrefix(last.Msg, want) || last.Level != "info" {
		t.Errorf("last line = %+v, want info %q...", last, want)
	}
	if outcome, _ := e.lastRun(); outcome != "ok" {
		t.Errorf("run record outcome %q, want ok", outcome)
	}

	// The run's summary as JSON on stdout: the same outcome and last line.
	e.dropFile("c.csv", csvExport(genPeople(1, 18)))
	res = e.mustRun(0, "run", "people", "-o", "json")
	var sum struct {
		Outcome  string `json:"outcome"`
		ExitCode int    `json:"exitCode"`
		Message  string `json:"message"`
		Cycles   []struct {
			Job     string         `json:"job"`
			Tenant  string         `json:"tenant"`
			Outcome string         `json:"outcome"`
			Cause   string         `json:"cause"`
			Counts  map[string]int `json:"counts"`
			Report  struct {
				Exports []struct {
					Source string `json:"source"`
					Cause  string `json:"cause"`
				} `json:"exports"`
			} `json:"report"`
		} `json:"cycles"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("run -o json printed no JSON document (%v): %s", err, res)
	}
	last = lastLine(t, res)
	if sum.Outcome != "ok" || sum.ExitCode != 0 || sum.Message != last.Msg || len(sum.Cycles) != 1 ||
		sum.Cycles[0].Job != "people" || sum.Cycles[0].Counts["created"] != 2 ||
		len(sum.Cycles[0].Report.Exports) != 1 || sum.Cycles[0].Report.Exports[0].Source != "c.csv" {
		t.Errorf("summary %+v does not match the run (last line %q)", sum, last.Msg)
	}
	if r := e.runEnv(nil, "run", "people", "-o", "yaml"); r.code != 2 {
		t.Errorf("an unknown output format: want exit 2, got %s", r)
	}

	// Every job of a cycle, JSON from the first line to the last.
	res = e.mustRun(0, "run", "all")
	if last = lastLine(t, res); last.Msg != "ok: 4 cycles done (people, grants, personalize, orders of tenant "+tenantName+")" || last.ExitCode != 0 {
		t.Errorf("run all: last line %+v", last)
	}
}
