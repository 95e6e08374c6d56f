package main_test

// End-to-end tests of the CLI's contract: usage errors through the real
// binary, and the JSON shape of every command that prints a result,
// against golden files (testdata/golden; `go test -run TestJSONOutputGolden
// ./cmd/hrsync -update` rewrites them after a deliberate change).

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

func TestUsageErrorsThroughTheBinary(t *testing.T) {
	e := &env{t: t, dir: t.TempDir(), config: filepath.Join(t.TempDir(), "none.yaml")}

	res := e.run("run", "peoples")
	if res.code != 2 || !strings.Contains(res.stderr, "did you mean people?") || res.stdout != "" {
		t.Errorf("hrsync run peoples: %s", res)
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `hrsync: unknown command "peoples" for "hrsync run"`) {
		t.Errorf("last line %q", last)
	}

	flagVersion := runBare(t, "--version")
	cmdVersion := runBare(t, "version")
	if flagVersion.code != 0 || !regexp.MustCompile(`^hrsync \S+\n$`).MatchString(flagVersion.stdout) || flagVersion.stdout != cmdVersion.stdout {
		t.Errorf("hrsync --version: %s\nhrsync version: %s", flagVersion, cmdVersion)
	}

	if res := e.run("frobnicate"); res.code != 2 || !strings.Contains(res.stderr, `unknown command "frobnicate"`) {
		t.Errorf("hrsync frobnicate: %s", res)
	}
	if res := e.run("orders", "show"); res.code != 2 || !strings.Contains(res.stderr, "accepts 1 arg(s), received 0") {
		t.Errorf("hrsync orders show: %s", res)
	}
	if res := e.run("status", "--confg", "x"); res.code != 2 || !strings.Contains(res.stderr, "did you mean --config?") {
		t.Errorf("hrsync status --confg x: %s", res)
	}
}

// runBare runs the binary with args alone (no --config, which version
// does not take).
func runBare(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), binaryPath(), args...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run hrsync %v: %v", args, err)
	}
	return res
}

// TestJSONOutputGolden runs every command that prints a result with -o
// json (or --json) against the emulator and compares what it prints, with
// its volatile values (times, generated ids, the test's folder and port)
// replaced, to testdata/golden/NAME.json: a key renamed, added or
// dropped, or an empty list printed as null, fails it.
func TestJSONOutputGolden(t *testing.T) {
	e := newEnv(t, configOptions{})
	g := golden{e: e}

	if res := runBare(t, "version", "-o", "json"); res.code != 0 {
		t.Errorf("version -o json: %s", res)
	} else {
		g.check(t, "version", res)
	}
	g.check(t, "config-show", e.mustRun(0, "config", "show", "-o", "json"))

	// validate a file outside the drop folder, with one bad row.
	outside := filepath.Join(e.dir, "check.csv")
	bad := append(csvExport(genPeople(0, 3)), []byte("X0001,not-an-email,Bad,Row,Sales,Lisbon,2024-01-02,1990-03-04,\n")...)
	if err := os.WriteFile(outside, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	g.check(t, "validate", e.mustRun(4, "validate", "-o", "json", outside))

	e.dropFile("staff-1.csv", csvExport(genPeople(0, 4)))
	g.check(t, "plan-new", e.mustRun(0, "plan", "--output", "json"))
	e.mustRun(0, "run", "people")
	checkNoExportsList(t, e)
	g.check(t, "grants-list", e.mustRun(0, "grants", "list", "--state", "applied", "-o", "json"))
	g.check(t, "grants-list-empty", e.mustRun(0, "grants", "list", "--json"))

	// The next export changes P00001, drops P00000 and adds P00004.
	next := genPeople(1, 5)
	next[0].dept = "Finance"
	e.dropFile("staff-2.csv", csvExport(next))
	g.check(t, "plan-changes", e.mustRun(0, "plan", "--json"))
	text := e.mustRun(0, "plan")
	for _, want := range []string{"  new (1):\n    P00004 Esi Placeholt, granted 10.00\n",
		"  changed (1):\n    P00001 Bruno Samplesen\n", "  departed (1):\n    P00000\n"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("the text plan lacks %q:\n%s", want, text.stdout)
		}
	}

	order := e.emu.placeOrder(t, e.coll, "P00001", time.Now().Add(-time.Hour), placeLine{ProductID: notebookProduct, Quantity: 2})
	e.mustRun(0, "run", "orders")
	g.check(t, "orders-show", e.mustRun(0, "orders", "show", order.ID, "-o", "json"))
	g.check(t, "status", e.mustRun(0, "status", "-o", "json"))
	g.check(t, "product-get", e.mustRun(0, "product", "get", e.coll, notebookProduct, "-o", "json"))
}

// checkNoExportsList checks that a people run with no export ready lists
// its exports as [] in `run -o json`, never null.
func checkNoExportsList(t *testing.T, e *env) {
	t.Helper()
	var sum struct {
		Cycles []struct {
			Report map[string]json.RawMessage `json:"report"`
		} `json:"cycles"`
	}
	res := e.run("run", "people", "-o", "json")
	if err := json.Unmarshal([]byte(res.stdout), &sum); err != nil || len(sum.Cycles) != 1 {
		t.Fatalf("run people -o json: %v\n%s", err, res)
	}
	if got := string(sum.Cycles[0].Report["exports"]); got != "[]" {
		t.Errorf("run people -o json with no export ready: exports = %s, want []", got)
	}
}

// golden compares outputs to the files of testdata/golden.
type golden struct {
	e *env
}

// volatileKeys name the values that change from run to run: they are
// replaced, and so is every other occurrence of their value (a map key).
var volatileKeys = map[string]bool{"runId": true, "orderId": true, "orderNumber": true, "lineItemId": true, "version": true}

// check normalizes one command's stdout and compares it to NAME.json, or
// writes NAME.json with -update.
func (g golden) check(t *testing.T, name string, res result) {
	t.Helper()
	got := g.normalize(t, res.stdout)
	path := filepath.Join("testdata", "golden", name+".json")
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run the test with -update to write it)", name, err)
	}
	if string(want) != string(got) {
		t.Errorf("%s: the JSON output differs from %s (if the change is meant, rerun with -update)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// normalize replaces the test's folder and the emulator's address, every
// time and every volatile value, and prints the document with sorted keys.
func (g golden) normalize(t *testing.T, out string) []byte {
	t.Helper()
	out = strings.ReplaceAll(out, g.e.emu.url, "<api>")
	out = strings.ReplaceAll(out, g.e.dir, "<dir>")
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	seen := map[string]string{}
	collectVolatile(doc, "", seen)
	doc = replaceVolatile(doc, seen)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// collectVolatile names each value of a volatile key <key-N>, N counting
// the distinct values of that key in the order of the document.
func collectVolatile(v any, key string, seen map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			collectVolatile(v[k], k, seen)
		}
	case []any:
		for _, item := range v {
			collectVolatile(item, key, seen)
		}
	case string:
		if volatileKeys[key] && v != "" && seen[v] == "" {
			n := 1
			for _, name := range seen {
				if strings.HasPrefix(name, "<"+key+"-") {
					n++
				}
			}
			seen[v] = "<" + key + "-" + strconv.Itoa(n) + ">"
		}
	}
}

// replaceVolatile replaces the collected values, as values and as map
// keys, and every RFC 3339 time.
func replaceVolatile(v any, seen map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			if r, ok := seen[k]; ok {
				k = r
			}
			out[k] = replaceVolatile(item, seen)
		}
		return out
	case []any:
		for i := range v {
			v[i] = replaceVolatile(v[i], seen)
		}
		return v
	case string:
		if r, ok := seen[v]; ok {
			return r
		}
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return "<time>"
		}
		return v
	}
	return v
}
