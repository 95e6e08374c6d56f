package config

import (
	"slices"
	"strings"
	"testing"
)

// TestSyntaxErrorPositions checks that each kind of YAML syntax error is
// reported at the line and column where it is, as the parser finds it.
func TestSyntaxErrorPositions(t *testing.T) {
	cases := []struct {
		name, file   string
		line, column int
		reason       string
	}{
		{"a tab in the indentation",
			"store:\n  url: sqlite:x.db\n\tschema: hrsync\n", 3, 1, "tab character"},
		{"a key indented deeper than the one above",
			"store:\n  url: sqlite:x.db\n   schema: hrsync\napi:\n  timeout: 3s\n", 3, 10, "indented more"},
		{"a key indented less than the one above",
			"store:\n    url: sqlite:x.db\n  schema: hrsync\n", 3, 3, "not allowed"},
		{"an unclosed double quote",
			"log:\n  level: info\napi:\n  baseUrl: \"http://x\n  timeout: 3s\n", 4, 12, "double-quoted string is not closed"},
		{"an unclosed single quote",
			"log:\n  level: 'info\n", 2, 10, "single-quoted string is not closed"},
		{"an unclosed flow sequence",
			"tenants:\n  - name: a\n    personalize:\n      collections: [a, b\n    orders:\n      backfillDays: 3\n", 5, 5, "list in brackets ([...]) is not closed"},
		{"an unclosed flow mapping",
			"log: {level: info\napi:\n  timeout: 3s\n", 2, 1, "mapping in braces ({...}) is not closed"},
		{"a duplicate key",
			"store:\n  url: sqlite:x.db\napi:\n  timeout: 3s\n  timeout: 4s\n", 5, 3, `"timeout" already defined at [4:3]`},
		{"a stray colon in a value",
			"store:\n  url: sqlite:x.db\napi:\n  timeout: 3s: 4s\n", 4, 12, "mapping value is not allowed"},
		{"a list item where keys are",
			"store:\n  url: sqlite:x.db\n  schema: hrsync\n  - extra\n", 4, 3, "non-map value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.file, nil)
			ps := problemsOf(t, err)
			if len(ps) != 1 {
				t.Fatalf("problems = %v, want one", ps)
			}
			p := ps[0]
			if p.Line != c.line || p.Column != c.column {
				t.Errorf("at line %d column %d, want line %d column %d: %s", p.Line, p.Column, c.line, c.column, p)
			}
			if !strings.HasPrefix(p.Reason, "invalid YAML: ") || !strings.Contains(p.Reason, c.reason) {
				t.Errorf("reason %q, want one holding %q", p.Reason, c.reason)
			}
			if want := "(line "; !strings.Contains(err.Error(), want) || strings.Contains(p.Reason, "\t") {
				t.Errorf("message %q", err.Error())
			}
		})
	}
}

func TestUnknownKeySuggestions(t *testing.T) {
	cases := []struct {
		name, file, path   string
		line, column       int
		reason             string
		noSuggestionExpect bool
	}{
		{"a typo in api", minimal + "api:\n  timout: 3s\n", "api.timout", 10, 3,
			`unknown key "timout"; did you mean "timeout"?`, false},
		{"a case slip in a tenant", minimal + "    companyID: x\n", "tenants[0].companyID", 9, 5,
			`unknown key "companyID"; did you mean "companyId"?`, false},
		{"a key of an inline struct", minimal + "        patern: '*.txt'\n", "tenants[0].source.csv.patern", 9, 9,
			`unknown key "patern"; did you mean "pattern"?`, false},
		{"a mapping key beside its inline fields", minimal + "        dateLayout: {}\n", "tenants[0].source.csv.dateLayout", 9, 9,
			`unknown key "dateLayout"; did you mean "dateLayouts"?`, false},
		{"top level", "tenant:\n  - name: x\n" + minimal, "tenant", 1, 1,
			`unknown key "tenant"; did you mean "tenants"?`, false},
		{"nothing close", minimal + "api:\n  frobnicate: 1\n", "api.frobnicate", 10, 3,
			`unknown key "frobnicate"`, true},
		{"the token in the file", minimal + "api:\n  token: abc\n", "api.token", 10, 3,
			`unknown key "token": the token is never read from the file: set HRSYNC_API_TOKEN or api.tokenFile`, true},
		{"inside a merge", "x-base: &base\n  timout: 1s\n" + minimal, "x-base", 1, 1, `unknown key "x-base"`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.file, nil)
			ps := problemsOf(t, err)
			i := slices.IndexFunc(ps, func(p Problem) bool { return p.Path == c.path })
			if i < 0 {
				t.Fatalf("no problem at %s:\n%v", c.path, err)
			}
			p := ps[i]
			matches := p.Reason == c.reason || (c.noSuggestionExpect && strings.HasPrefix(p.Reason, c.reason))
			if !matches {
				t.Errorf("reason %q, want %q", p.Reason, c.reason)
			}
			if c.noSuggestionExpect && strings.Contains(p.Reason, "did you mean") {
				t.Errorf("reason %q suggests a key, want none", p.Reason)
			}
			if p.Line != c.line || p.Column != c.column {
				t.Errorf("at %d:%d, want %d:%d", p.Line, p.Column, c.line, c.column)
			}
		})
	}
	t.Run("a merged mapping is checked against the struct it lands in", func(t *testing.T) {
		file := "store:\n  <<: {schema: hrsync, shema: x}\n" + minimal
		_, err := load(t, file, nil)
		ps := problemsOf(t, err)
		if !hasProblem(ps, "store.shema", `did you mean "schema"?`) {
			t.Errorf("problems = %v", ps)
		}
	})
}

func TestPlatformIDsAreUUIDs(t *testing.T) {
	const good = "10000000-0000-4000-8000-000000000001"
	file := `tenants:
  - name: acme
    companyId: acme-corp
    collectionId: "{20000000-0000-4000-8000-000000000002}"
    source: {csv: {dir: drop}}
    personalize:
      collections: [` + good + `, 3000000-0000-4000-8000-000000000001, ""]
`
	_, err := load(t, file, nil)
	ps := problemsOf(t, err)
	for _, w := range []struct {
		path string
		line int
	}{
		{"tenants[0].companyId", 3},
		{"tenants[0].collectionId", 4},
		{"tenants[0].personalize.collections[1]", 7},
	} {
		i := slices.IndexFunc(ps, func(p Problem) bool { return p.Path == w.path })
		if i < 0 || !strings.Contains(ps[i].Reason, "is not a UUID") || ps[i].Line != w.line {
			t.Errorf("%s: want a UUID problem on line %d in\n%v", w.path, w.line, err)
		}
	}
	if !hasProblem(ps, "tenants[0].personalize.collections[2]", "must not be empty") || len(ps) != 4 {
		t.Errorf("problems = %v", ps)
	}
	t.Run("upper-case hex is a UUID", func(t *testing.T) {
		mustLoad(t, strings.Replace(minimal, "10000000-0000-4000-8000-000000000001", "ABCDEF00-0000-4000-8000-00000000000A", 1), nil)
	})
}
