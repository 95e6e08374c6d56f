package grafana_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The parts of a Grafana dashboard that hrsync.json uses, decoded with
// unknown fields refused, so that a misspelt key fails.
type (
	datasourceRef struct {
		Type string `json:"type"`
		UID  string `json:"uid"`
	}
	target struct {
		RefID        string         `json:"refId"`
		Datasource   *datasourceRef `json:"datasource"`
		Expr         string         `json:"expr"`
		LegendFormat string         `json:"legendFormat"`
		Instant      bool           `json:"instant,omitempty"`
		Format       string         `json:"format,omitempty"`
	}
	panel struct {
		ID          int            `json:"id"`
		Type        string         `json:"type"`
		Title       string         `json:"title"`
		Description string         `json:"description,omitempty"`
		Collapsed   bool           `json:"collapsed,omitempty"`
		Datasource  *datasourceRef `json:"datasource,omitempty"`
		GridPos     struct {
			H, W, X, Y int
		} `json:"gridPos"`
		FieldConfig *struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
			Overrides []json.RawMessage `json:"overrides"`
		} `json:"fieldConfig,omitempty"`
		Options map[string]any `json:"options,omitempty"`
		Targets []target       `json:"targets,omitempty"`
		Panels  []panel        `json:"panels,omitempty"`
	}
	variable struct {
		Name       string          `json:"name"`
		Label      string          `json:"label"`
		Type       string          `json:"type"`
		Datasource *datasourceRef  `json:"datasource,omitempty"`
		Query      json.RawMessage `json:"query"`
		Definition string          `json:"definition,omitempty"`
		IncludeAll bool            `json:"includeAll,omitempty"`
		Multi      bool            `json:"multi,omitempty"`
		AllValue   string          `json:"allValue,omitempty"`
		Current    map[string]any  `json:"current"`
		Refresh    int             `json:"refresh,omitempty"`
		Hide       int             `json:"hide"`
	}
	dashboard struct {
		Title         string `json:"title"`
		UID           string `json:"uid"`
		Description   string `json:"description"`
		Tags          []string
		Timezone      string `json:"timezone"`
		SchemaVersion int    `json:"schemaVersion"`
		Version       int    `json:"version"`
		Editable      bool   `json:"editable"`
		Refresh       string `json:"refresh"`
		Time          struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"time"`
		Templating struct {
			List []variable `json:"list"`
		} `json:"templating"`
		Annotations struct {
			List []json.RawMessage `json:"list"`
		} `json:"annotations"`
		Panels []panel `json:"panels"`
	}
)

// load decodes hrsync.json strictly.
func load(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("hrsync.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("hrsync.json: %v", err)
	}
	return d
}

// queryPanels returns every panel that queries, rows' nested ones included.
func queryPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, queryPanels(p.Panels)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestDashboardStructure checks what Grafana needs to show every panel:
// unique ids, a data source from the variable, queries with refIds, the
// variables the queries use, and panels within the 24-column grid.
func TestDashboardStructure(t *testing.T) {
	d := load(t)
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want all set", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
	}
	used := regexp.MustCompile(`\$\{?(\w+)`)
	panels := queryPanels(d.Panels)
	if len(panels) == 0 {
		t.Fatal("no panel queries anything")
	}
	for _, p := range panels {
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %d %q: want a title and a query", p.ID, p.Title)
		}
		if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: datasource %+v, want the prometheus ${datasource} variable", p.Title, p.Datasource)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.Expr == "" || tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: target %+v: want an expr and a refId of its own", p.Title, tg)
			}
			refs[tg.RefID] = true
			for _, m := range used.FindAllStringSubmatch(tg.Expr, -1) {
				if !vars[m[1]] && !strings.HasPrefix(m[1], "__") {
					t.Errorf("panel %q uses $%s, which is no variable of the dashboard", p.Title, m[1])
				}
			}
		}
	}
}

// TestDashboardCovers checks that the dashboard shows what operators look
// at: runs and outcomes, people created, grants applied and held, API
// latency and errors by endpoint, rate-limit waits, orders by status.
func TestDashboardCovers(t *testing.T) {
	var exprs []string
	for _, p := range queryPanels(load(t).Panels) {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for what, re := range map[string]string{
		"runs by outcome":         `by \(job, outcome\) \(increase\(hrsync_runs_total\b`,
		"people created":          `hrsync_people_created_total\b`,
		"grants applied":          `hrsync_grants_applied_total\b`,
		"grants held":             `hrsync_grants_held\b`,
		"API latency by endpoint": `by \(endpoint, le\) \(rate\(hrsync_api_call_duration_seconds_bucket\b`,
		"API errors by endpoint":  `by \(endpoint, status\) \(rate\(hrsync_api_calls_total\{status!~"2\.\."\}`,
		"rate-limit waits":        `hrsync_api_rate_limit_waits_total\b`,
		"orders by status":        `sum by \(status\) \(max by \(tenant, status\) \(hrsync_orders\{`,
		"files waiting":           `hrsync_dropfolder_files_waiting\b`,
		"time since last success": `hrsync_last_success_timestamp_seconds\b`,
	} {
		if !regexp.MustCompile(re).MatchString(all) {
			t.Errorf("no query shows %s (%s)", what, re)
		}
	}
}

// grafanaToPromQL replaces Grafana's variables with values Prometheus
// parses: a range for the rate interval, "match all" for the selections.
var grafanaToPromQL = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$tenant", ".*", "$job", ".*")

// TestDashboardQueriesParse writes every query as a recording rule and has
// promtool (Prometheus' own parser) check them.
func TestDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is needed to parse the dashboard's queries (Debian package prometheus): %v", err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range queryPanels(load(t).Panels) {
		for _, tg := range p.Targets {
			q, err := json.Marshal(grafanaToPromQL.Replace(tg.Expr)) // a JSON string is a YAML string
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", n, q)
			n++
		}
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules of the dashboard's %d queries: %v\n%s", n, err, out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d rules found", n)) {
		t.Errorf("promtool did not check the %d queries:\n%s", n, out)
	}
}
