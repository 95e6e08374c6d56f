package config

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"hrsync/sources"
)

// examplesDir is the repository's examples folder.
const examplesDir = "../examples"

// exampleEnv stands in for the secrets the examples name: any variable an
// example points at is set to a placeholder, and hrsync's own variables are
// left unset so that the files are checked as written.
func exampleEnv(name string) (string, bool) {
	if strings.HasPrefix(name, "HRSYNC_") {
		return "", false
	}
	return "postgres://reader@hr-db.invalid/hr", true
}

func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil {
		t.Fatalf("glob: %v", err)
	}
	more, err := filepath.Glob(filepath.Join(examplesDir, "*.yml"))
	if err != nil {
		t.Fatalf("glob: %v", err)
	}
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("found %d example configurations in %s, want at least 2", len(files), examplesDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := Load(f, exampleEnv, testKinds, testDialects)
			if err != nil {
				t.Fatalf("example does not load: %v", err)
			}
			if len(cfg.Tenants) == 0 {
				t.Errorf("example has no tenant")
			}
		})
	}
}

// TestExampleExport checks the sample export against the drop-folder
// example that describes it: every mapped header is present, IDs keep
// their leading zeros, dates parse with the configured layouts, and
// balances are numbers.
func TestExampleExport(t *testing.T) {
	cfg, err := Load(filepath.Join(examplesDir, "csv-dropfolder.yaml"), exampleEnv, testKinds, testDialects)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	src := csvOf(t, cfg.Tenants[0])
	if src == nil {
		t.Fatalf("csv-dropfolder.yaml has no csv source")
	}
	matches, err := filepath.Glob(filepath.Join(src.Dir, "*.csv"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no export in the example's drop folder %s: %v", src.Dir, err)
	}
	f, err := os.Open(filepath.Join(src.Dir, "employees.csv"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if len(rows) < 21 {
		t.Fatalf("%d rows, want about 25 people", len(rows)-1)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[sources.NormalizeHeader(h)] = i
	}
	cell := func(t *testing.T, row []string, field sources.Field) string {
		t.Helper()
		i, ok := col[sources.NormalizeHeader(src.Mapping.Columns[field.String()])]
		if !ok {
			t.Fatalf("header has no column for %s", field)
		}
		return strings.TrimSpace(row[i])
	}
	t.Run("every mapped header is present", func(t *testing.T) {
		for field, header := range src.Mapping.Columns {
			if _, ok := col[sources.NormalizeHeader(header)]; !ok {
				t.Errorf("%s: header %q missing", field, header)
			}
		}
	})
	t.Run("rows", func(t *testing.T) {
		ids := map[string]bool{}
		var zeros, comma, emptyBalance int
		for n, row := range rows[1:] {
			line := n + 2
			id := cell(t, row, sources.ExternalID)
			if ids[id] {
				t.Errorf("line %d: duplicate id %s", line, id)
			}
			ids[id] = true
			if strings.HasPrefix(id, "0") {
				zeros++
			}
			if !strings.HasSuffix(strings.ToLower(cell(t, row, sources.Email)), "@example.com") {
				t.Errorf("line %d: e-mail not in example.com", line)
			}
			for _, field := range []sources.Field{sources.StartDate, sources.BirthDate} {
				v := cell(t, row, field)
				if v == "" && field == sources.BirthDate {
					continue
				}
				if _, err := time.Parse(src.Mapping.Layout(field), v); err != nil {
					t.Errorf("line %d: %s %q does not parse with %q", line, field, v, src.Mapping.Layout(field))
				}
			}
			if b := cell(t, row, sources.AddBalance); b == "" {
				emptyBalance++
			} else if _, err := strconv.ParseFloat(b, 64); err != nil {
				t.Errorf("line %d: balance %q is not a number", line, b)
			}
			for _, v := range row {
				if strings.Contains(v, ",") {
					comma++
				}
			}
		}
		if zeros != len(rows)-1 || comma == 0 || emptyBalance == 0 {
			t.Errorf("messy features missing: %d ids with leading zeros, %d quoted commas, %d empty balances", zeros, comma, emptyBalance)
		}
	})
}
