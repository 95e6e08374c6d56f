package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hrsync/internal/textfmt"
	"hrsync/sync/people"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// textWorld is a configuration of one tenant fed by a drop folder, with a
// SQLite state, in a test's folder: enough for validate and plan, which
// call no API.
type textWorld struct {
	config string
	drop   string
}

func newTextWorld(t *testing.T) textWorld {
	t.Helper()
	dir := t.TempDir()
	w := textWorld{config: filepath.Join(dir, "hrsync.yaml"), drop: filepath.Join(dir, "drop")}
	if err := os.MkdirAll(w.drop, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`store:
  url: sqlite:%s
log:
  level: error
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      csv:
        dir: %s
        stableFor: 1ms
    people:
      defaultBalance: 25
`, filepath.Join(dir, "state.db"), w.drop)
	if err := os.WriteFile(w.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := execRoot(t, "migrate", "--config", w.config); code != exitOK {
		t.Fatalf("migrate: exit %d\n%s", code, stderr)
	}
	return w
}

// export writes a CSV export of good new people and of rows whose e-mail
// is not an e-mail into the drop folder, and returns its path.
func (w textWorld) export(t *testing.T, good, bad int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("externalId,email,firstName,lastName,department,location,startDate,birthDate,addBalance\n")
	for i := range good {
		fmt.Fprintf(&b, "G%03d,g%03d@example.test,Ada%d,Testwell,Sales,Lisbon,2024-01-02,1990-03-04,\n", i, i, i)
	}
	for i := range bad {
		fmt.Fprintf(&b, "B%03d,not-an-email-%d,Bad%d,Row,Sales,Lisbon,2024-01-02,1990-03-04,25\n", i, i, i)
	}
	path := filepath.Join(w.drop, "staff.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// indented counts the output's lines that start with prefix.
func indented(out, prefix string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func TestValidatePrintsTheFirst50Rejections(t *testing.T) {
	w := newTextWorld(t)
	w.export(t, 5, 60)

	stdout, stderr, code := execRoot(t, "validate", "--config", w.config)
	if code != exitAttention || !strings.Contains(stderr, "60 rows rejected") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "staff.csv (tenant acme): 65 rows, 5 accepted, 60 rejected\n") {
		t.Errorf("no summary line:\n%s", stdout)
	}
	if n := indented(stdout, "  staff.csv:"); n != people.ValidateRejectionLimit {
		t.Errorf("%d rejections printed, want %d:\n%s", n, people.ValidateRejectionLimit, stdout)
	}
	if !strings.HasSuffix(stdout, "  and 10 more rejected rows (--all lists every one)\n") {
		t.Errorf("no count of the rest:\n%s", stdout)
	}

	stdout, _, code = execRoot(t, "validate", "--all", "--config", w.config)
	if n := indented(stdout, "  staff.csv:"); code != exitAttention || n != 60 || strings.Contains(stdout, "more rejected rows") {
		t.Errorf("--all: exit %d, %d rejections printed, want 60:\n%s", code, n, stdout)
	}

	stdout, _, code = execRoot(t, "validate", "-o", "json", "--config", w.config)
	var res people.Validation
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != exitAttention {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	if len(res.Exports) != 1 || len(res.Exports[0].Rejections) != 60 || res.Rejected != 60 || res.Exports[0].Stats.Accepted != 5 {
		t.Errorf("JSON lists every rejection: %+v", res)
	}
}

func TestValidateWithNothingReady(t *testing.T) {
	w := newTextWorld(t)
	stdout, _, code := execRoot(t, "validate", "--config", w.config)
	if code != exitOK || stdout != "no export is ready\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	stdout, _, code = execRoot(t, "validate", "--json", "--config", w.config)
	if code != exitOK || stdout != "{\n  \"exports\": [],\n  \"rejected\": 0\n}\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

func TestTextPlanNamesThePeople(t *testing.T) {
	w := newTextWorld(t)
	w.export(t, 25, 1)
	stdout, stderr, code := execRoot(t, "plan", "--config", w.config)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"would call createPeople once for 25 people, granting 625.00 in all\n",
		"  new (25):\n    G000 Ada0 Testwell, granted 25.00\n",
		"    G019 Ada19 Testwell, granted 25.00\n    and 5 more\n",
		"  rejected staff.csv:27: email:",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, stdout)
		}
	}
	if n := indented(stdout, "    G0"); n != textfmt.ListLimit {
		t.Errorf("%d people named, want %d", n, textfmt.ListLimit)
	}
	// By externalId and name only: never an e-mail or a birth date.
	for _, never := range []string{"@example.test", "1990-03-04", "e+"} {
		if strings.Contains(stdout, never) {
			t.Errorf("the plan prints %q:\n%s", never, stdout)
		}
	}

	stdout, _, code = execRoot(t, "plan", "-o", "json", "--config", w.config)
	var doc struct {
		People      []map[string]any `json:"people"`
		Personalize []any            `json:"personalize"`
		Grants      []any            `json:"grants"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != exitOK || len(doc.People) != 1 {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	plans := doc.People
	for _, key := range []string{"changed", "returned", "departed", "held", "safeguards"} {
		if list, ok := plans[0][key].([]any); !ok || len(list) != 0 {
			t.Errorf("%s = %#v, want []", key, plans[0][key])
		}
	}
	// The same 25 new people as the text, with their grants.
	if list, ok := plans[0]["new"].([]any); !ok || len(list) != 25 ||
		list[0].(map[string]any)["externalId"] != "G000" || list[0].(map[string]any)["grant"] != 25.0 {
		t.Errorf("new = %#v, want the 25 new people with their grants", plans[0]["new"])
	}
	if doc.Personalize == nil || doc.Grants == nil {
		t.Errorf("plan -o json lacks the personalize or grants section (want [] when empty):\n%s", stdout)
	}
}
