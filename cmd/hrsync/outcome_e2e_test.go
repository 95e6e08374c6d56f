package main_test

// The outcome model (DESIGN.md, invariant 7) end to end: the helpers that
// read a run's last line and record, and the outcomes of a run that did its
// work (the fault classes are in outcome_signals_e2e_test.go).

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
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

// runSummary is the part of `hrsync run -o json`'s document the tests read.
type runSummary struct {
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
			RunID   string `json:"runId"`
			Exports []struct {
				RunID      string `json:"runId"`
				Source     string `json:"source"`
				Outcome    string `json:"outcome"`
				Cause      string `json:"cause"`
				ArchivedAs string `json:"archivedAs"`
			} `json:"exports"`
		} `json:"report"`
	} `json:"cycles"`
}

// decodeSummary decodes the JSON document a `run -o json` printed.
func decodeSummary(t *testing.T, res result) runSummary {
	t.Helper()
	var sum runSummary
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil {
		t.Fatalf("run -o json printed no JSON document (%v): %s", err, res)
	}
	return sum
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
	sum := decodeSummary(t, res)
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
