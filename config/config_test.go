package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"hrsync/sources"
)

// envMap returns an environment lookup over m, for Load.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// noEnv is an empty environment.
var noEnv = envMap(nil)

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	return p
}

// minimal is a configuration naming only what has no default.
const minimal = `
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      csv:
        dir: drop
`

// load writes content to a config file in a fresh directory and loads it.
func load(t *testing.T, content string, env map[string]string) (*Config, error) {
	t.Helper()
	return Load(writeFile(t, t.TempDir(), "hrsync.yaml", content), envMap(env), testKinds, testDialects)
}

// mustLoad is load for a configuration that must be valid.
func mustLoad(t *testing.T, content string, env map[string]string) *Config {
	t.Helper()
	cfg, err := load(t, content, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// problemsOf returns the problems of a *Error, failing when err is another
// kind of error.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("error %v (%T) is not a *config.Error", err, err)
	}
	return cerr.Problems
}

// wantOnlyProblem loads content and fails unless its one problem is at
// path with a reason holding the given text.
func wantOnlyProblem(t *testing.T, content, path, reason string) {
	t.Helper()
	_, err := load(t, content, nil)
	ps := problemsOf(t, err)
	if !hasProblem(ps, path, reason) || len(ps) != 1 {
		t.Errorf("want only %s: %s, got\n%v", path, reason, err)
	}
}

// hasProblem reports whether a problem has the path and a reason holding
// the given text.
func hasProblem(ps []Problem, path, reason string) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool {
		return p.Path == path && strings.Contains(p.Reason, reason)
	})
}

func TestDefaults(t *testing.T) {
	t.Run("minimal file gets every default", func(t *testing.T) {
		dir := t.TempDir()
		cfg, err := Load(writeFile(t, dir, "hrsync.yaml", minimal), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got := cfg.Store.URL.Value(); got != "sqlite:"+filepath.Join(dir, "hrsync.db") {
			t.Errorf("store.url = %q, want the default beside the file", got)
		}
		if cfg.Store.Schema != "hrsync" {
			t.Errorf("store.schema = %q", cfg.Store.Schema)
		}
		want := API{
			BaseURL: "http://127.0.0.1:8080", Timeout: D(30 * time.Second), PersonalizeTimeout: D(time.Minute),
			RatePerSecond: 10, Burst: 10, MaxConcurrency: 8, MaxAttempts: 5,
		}
		if cfg.API != want {
			t.Errorf("api = %+v, want %+v", cfg.API, want)
		}
		if cfg.Log != (Log{Level: "info", Format: "auto"}) || cfg.HTTP.Listen != "" || cfg.Timezone != "UTC" {
			t.Errorf("log %+v, http %+v, timezone %q", cfg.Log, cfg.HTTP, cfg.Timezone)
		}
		if cfg.Location() != time.UTC {
			t.Errorf("Location() = %v", cfg.Location())
		}
		if len(cfg.Tenants) != 1 {
			t.Fatalf("tenants = %d", len(cfg.Tenants))
		}
		tn := cfg.Tenants[0]
		def := DefaultTenant()
		if tn.People != def.People || tn.Safeguards != def.Safeguards || tn.Orders != def.Orders || tn.Schedules != def.Schedules {
			t.Errorf("tenant policies differ from DefaultTenant: %+v", tn)
		}
		if tn.Safeguards != (Safeguards{MaxDepartedRatio: 0.20, MinRowsRatio: 0.80, MaxRejectedRatio: 0.10, MinPopulation: 50}) {
			t.Errorf("safeguards = %+v", tn.Safeguards)
		}
		if tn.Personalize.WindowBefore.Duration != 30*Day || tn.Personalize.WindowAfter.Duration != 7*Day || len(tn.Personalize.Collections) != 0 {
			t.Errorf("personalize = %+v", tn.Personalize)
		}
		if tn.Schedules.People != "*/15 * * * *" || tn.Schedules.Orders != "" {
			t.Errorf("schedules = %+v", tn.Schedules)
		}
		if tn.Source.Kind() != "csv" {
			t.Fatalf("source kind = %q", tn.Source.Kind())
		}
		csv := csvOf(t, tn)
		if csv.Pattern != sources.DefaultPattern || csv.StableFor != sources.DefaultStableFor || csv.Encoding != "auto" {
			t.Errorf("csv defaults: %+v", csv)
		}
		if len(csv.Mapping.Columns) != int(sources.NumFields) || csv.Mapping.Columns["externalId"] != "externalId" {
			t.Errorf("default columns = %v", csv.Mapping.Columns)
		}
	})
	t.Run("Default alone names no tenant", func(t *testing.T) {
		d := Default()
		if len(d.Tenants) != 0 || d.API.MaxAttempts != 5 || d.Store.URL.Value() != DefaultStoreURL {
			t.Errorf("Default() = %v", d)
		}
		d.Store.dialects = testDialects // as Load wires them
		ps := &problems{}
		d.validate(ps)
		if !hasProblem(ps.list, "tenants", "at least one tenant") || len(ps.list) != 1 {
			t.Errorf("problems of Default() = %v", ps.list)
		}
	})
	t.Run("keys given keep their value and siblings keep defaults", func(t *testing.T) {
		cfg := mustLoad(t, minimal+`
    safeguards:
      maxDepartedRatio: 0
    people:
      sendEmail: true
api:
  burst: 3
`, nil)
		tn := cfg.Tenants[0]
		if tn.Safeguards.MaxDepartedRatio != 0 || tn.Safeguards.MinRowsRatio != 0.8 {
			t.Errorf("safeguards = %+v", tn.Safeguards)
		}
		if !tn.People.SendEmail || tn.People.BatchSize != 100 {
			t.Errorf("people = %+v", tn.People)
		}
		if cfg.API.Burst != 3 || cfg.API.RatePerSecond != 10 {
			t.Errorf("api = %+v", cfg.API)
		}
	})
	t.Run("an empty section keeps its defaults", func(t *testing.T) {
		cfg := mustLoad(t, minimal+"    safeguards:\napi:\n", nil)
		if cfg.Tenants[0].Safeguards != DefaultTenant().Safeguards || cfg.API.MaxAttempts != 5 {
			t.Errorf("safeguards %+v api %+v", cfg.Tenants[0].Safeguards, cfg.API)
		}
	})
	t.Run("relative paths are taken from the file's directory", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "token", "tok-123\n")
		path := writeFile(t, dir, "hrsync.yaml", minimal+"api:\n  tokenFile: token\n")
		cfg, err := Load(path, noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got := csvOf(t, cfg.Tenants[0]).Dir; got != filepath.Join(dir, "drop") {
			t.Errorf("dir = %q", got)
		}
		if cfg.API.TokenFile != filepath.Join(dir, "token") || cfg.API.Token.Value() != "tok-123" {
			t.Errorf("tokenFile = %q, token set = %v", cfg.API.TokenFile, cfg.API.Token.IsSet())
		}
	})
}

func TestConfigPath(t *testing.T) {
	t.Run("HRSYNC_CONFIG names the file when no path is given", func(t *testing.T) {
		path := writeFile(t, t.TempDir(), "c.yaml", minimal)
		cfg, err := Load("", envMap(map[string]string{EnvConfig: path}), testKinds, testDialects)
		if err != nil || cfg.Tenants[0].Name != "acme" {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("no path at all is a configuration error", func(t *testing.T) {
		_, err := Load("", noEnv, testKinds, testDialects)
		ps := problemsOf(t, err)
		if len(ps) != 1 || !strings.Contains(ps[0].Reason, "--config") {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("a missing file is a configuration error", func(t *testing.T) {
		_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), noEnv, testKinds, testDialects)
		ps := problemsOf(t, err)
		if len(ps) != 1 || !strings.Contains(ps[0].Reason, "does not exist") {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("an empty file", func(t *testing.T) {
		_, err := load(t, "# nothing\n", nil)
		if ps := problemsOf(t, err); len(ps) != 1 || !strings.Contains(ps[0].Reason, "empty") {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("a syntax error names its line", func(t *testing.T) {
		_, err := load(t, "api:\n  baseUrl: [\n", nil)
		ps := problemsOf(t, err)
		if len(ps) != 1 || ps[0].Line == 0 || !strings.Contains(ps[0].Reason, "invalid YAML") {
			t.Errorf("problems = %v", ps)
		}
	})
}

func TestEnvOverrides(t *testing.T) {
	env := map[string]string{
		EnvStoreURL:   "postgres://hrsync@db.internal:5432/hr",
		EnvAPIBaseURL: "https://platform.example.com",
		EnvLogLevel:   "debug",
		EnvLogFormat:  "json",
		EnvHTTPListen: ":9090",
		EnvTimezone:   "Europe/Paris",
	}
	file := minimal + `
store:
  url: sqlite:other.db
  urlEnv: SHOULD_NOT_BE_READ
api:
  baseUrl: http://file.example.com
log:
  level: warn
  format: console
http:
  listen: 127.0.0.1:1
timezone: UTC
`
	t.Run("each variable wins over the file", func(t *testing.T) {
		cfg := mustLoad(t, file, env)
		if cfg.Store.URL.Value() != env[EnvStoreURL] || cfg.Store.URLEnv != "" {
			t.Errorf("store = %#v", cfg.Store)
		}
		if cfg.API.BaseURL != env[EnvAPIBaseURL] || cfg.Log.Level != "debug" || cfg.Log.Format != "json" || cfg.HTTP.Listen != ":9090" {
			t.Errorf("api %q log %+v http %+v", cfg.API.BaseURL, cfg.Log, cfg.HTTP)
		}
		if cfg.Timezone != "Europe/Paris" || cfg.Location().String() != "Europe/Paris" {
			t.Errorf("timezone %q location %v", cfg.Timezone, cfg.Location())
		}
	})
	t.Run("empty variables are ignored", func(t *testing.T) {
		cfg := mustLoad(t, minimal+"log:\n  level: warn\n", map[string]string{EnvLogLevel: "", EnvAPIToken: " "})
		if cfg.Log.Level != "warn" || cfg.API.Token.IsSet() {
			t.Errorf("log %+v, token set %v", cfg.Log, cfg.API.Token.IsSet())
		}
	})
	t.Run("a bad override is reported with the variable's name", func(t *testing.T) {
		_, err := load(t, minimal, map[string]string{EnvLogFormat: "xml"})
		ps := problemsOf(t, err)
		if len(ps) != 1 || ps[0].Path != "log.format" || ps[0].Env != EnvLogFormat {
			t.Fatalf("problems = %v", ps)
		}
		if !strings.Contains(err.Error(), "(from HRSYNC_LOG_FORMAT)") {
			t.Errorf("error %q does not name the variable", err)
		}
	})
	t.Run("store url from urlEnv and urlFile", func(t *testing.T) {
		cfg := mustLoad(t, minimal+"store:\n  urlEnv: HR_STORE\n", map[string]string{"HR_STORE": "postgres://u:pw@h/db"})
		if cfg.Store.URL.Value() != "postgres://u:pw@h/db" {
			t.Errorf("url from env = %v", cfg.Store.URL)
		}
		dir := t.TempDir()
		writeFile(t, dir, "url", "postgres://u:pw@h/file\n")
		cfg, err := Load(writeFile(t, dir, "c.yaml", minimal+"store:\n  urlFile: url\n"), noEnv, testKinds, testDialects)
		if err != nil || cfg.Store.URL.Value() != "postgres://u:pw@h/file" {
			t.Errorf("url from file: %v, %v", err, cfg)
		}
		_, err = load(t, minimal+"store:\n  urlEnv: HR_STORE\n", nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "store.urlEnv", "HR_STORE is not set") {
			t.Errorf("problems = %v", ps)
		}
	})
}

func TestToken(t *testing.T) {
	const secret = "tok-s3cr3t-value"
	t.Run("from HRSYNC_API_TOKEN", func(t *testing.T) {
		cfg := mustLoad(t, minimal, map[string]string{EnvAPIToken: secret})
		if cfg.API.Token.Value() != secret {
			t.Errorf("token not taken from the environment")
		}
	})
	t.Run("from api.tokenFile", func(t *testing.T) {
		dir := t.TempDir()
		tok := writeFile(t, dir, "token", "  "+secret+"\n")
		cfg := mustLoad(t, minimal+"api:\n  tokenFile: "+tok+"\n", nil)
		if cfg.API.Token.Value() != secret {
			t.Errorf("token not read from the file")
		}
	})
	t.Run("from HRSYNC_API_TOKEN_FILE over api.tokenFile", func(t *testing.T) {
		dir := t.TempDir()
		tok := writeFile(t, dir, "token", secret)
		cfg := mustLoad(t, minimal+"api:\n  tokenFile: /nonexistent/token\n", map[string]string{EnvAPITokenFile: tok})
		if cfg.API.Token.Value() != secret || cfg.API.TokenFile != tok {
			t.Errorf("tokenFile %q", cfg.API.TokenFile)
		}
	})
	t.Run("HRSYNC_API_TOKEN over a token file", func(t *testing.T) {
		dir := t.TempDir()
		tok := writeFile(t, dir, "token", "from-file")
		cfg := mustLoad(t, minimal+"api:\n  tokenFile: "+tok+"\n", map[string]string{EnvAPIToken: secret})
		if cfg.API.Token.Value() != secret {
			t.Errorf("the environment's token did not win")
		}
	})
	t.Run("no token is not an error at load", func(t *testing.T) {
		cfg := mustLoad(t, minimal, nil)
		if cfg.API.Token.IsSet() {
			t.Errorf("token set from nowhere")
		}
	})
	t.Run("missing and empty token files", func(t *testing.T) {
		dir := t.TempDir()
		empty := writeFile(t, dir, "empty", "\n")
		_, err := load(t, minimal+"api:\n  tokenFile: "+filepath.Join(dir, "absent")+"\n", nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "api.tokenFile", "does not exist") {
			t.Errorf("problems = %v", ps)
		}
		_, err = load(t, minimal+"api:\n  tokenFile: "+empty+"\n", nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "api.tokenFile", "is empty") {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("a token with white space inside is refused without being shown", func(t *testing.T) {
		_, err := load(t, minimal, map[string]string{EnvAPIToken: "abc " + secret})
		if ps := problemsOf(t, err); !hasProblem(ps, "api.token", "white space") {
			t.Errorf("problems = %v", ps)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the token")
		}
	})
}

func TestSecretsRedacted(t *testing.T) {
	const (
		token     = "tok-s3cr3t-value"
		dsn       = "postgres://hr:dsn-pa55word@hr-db/people"
		storePass = "store-pa55word"
	)
	file := minimal + `
  - name: beta
    companyId: 10000000-0000-4000-8000-000000000003
    collectionId: 20000000-0000-4000-8000-000000000004
    source:
      sql:
        driver: postgres
        dsnEnv: HR_DSN
        query: SELECT 1
store:
  url: postgres://hrsync:` + storePass + `@db/hrsync?sslmode=disable
`
	cfg := mustLoad(t, file, map[string]string{EnvAPIToken: token, "HR_DSN": dsn})
	if sqlOf(t, cfg.Tenants[1]).DSN != dsn || cfg.API.Token.Value() != token || !strings.Contains(cfg.Store.URL.Value(), storePass) {
		t.Fatalf("secrets not resolved")
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("cfg", "token", cfg.API.Token, "store", cfg.Store.URL)
	forms := map[string]string{
		"String":         cfg.String(),
		"%v":             fmt.Sprintf("%v", cfg),
		"%+v":            fmt.Sprintf("%+v", *cfg),
		"%#v":            fmt.Sprintf("%#v", *cfg),
		"%v api":         fmt.Sprintf("%v", cfg.API),
		"%+v api":        fmt.Sprintf("%+v", cfg.API),
		"%#v api":        fmt.Sprintf("%#v", cfg.API),
		"%s token":       fmt.Sprintf("%s", cfg.API.Token),
		"%q token":       fmt.Sprintf("%q", cfg.API.Token),
		"%x token":       fmt.Sprintf("%x", cfg.API.Token),
		"%v store":       fmt.Sprintf("%v", cfg.Store),
		"%#v store":      fmt.Sprintf("%#v", cfg.Store),
		"%+v tenant":     fmt.Sprintf("%+v", cfg.Tenants[1]),
		"%#v tenant":     fmt.Sprintf("%#v", cfg.Tenants[1]),
		"%v sql":         fmt.Sprintf("%v", sqlOf(t, cfg.Tenants[1])),
		"%#v sql":        fmt.Sprintf("%#v", *sqlOf(t, cfg.Tenants[1])),
		"YAML":           string(y),
		"JSON":           string(js),
		"slog":           logged.String(),
		"Sprint(secret)": fmt.Sprint(cfg.API.Token, cfg.Store.URL),
	}
	for name, out := range forms {
		t.Run(name, func(t *testing.T) {
			for _, s := range []string{token, "dsn-pa55word", storePass} {
				if strings.Contains(out, s) {
					t.Errorf("%s shows a secret", name)
				}
			}
		})
	}
	t.Run("YAML marks what is set", func(t *testing.T) {
		if !strings.Contains(string(y), "dsn: '[redacted]'") || !strings.Contains(string(y), "postgres://hrsync:xxxxx@db/hrsync") {
			t.Errorf("YAML dump:\n%s", y)
		}
	})
	t.Run("a DSN written in the file is refused without being shown", func(t *testing.T) {
		_, err := load(t, minimal+`
  - name: beta
    companyId: 10000000-0000-4000-8000-000000000007
    collectionId: 20000000-0000-4000-8000-000000000008
    source:
      sql: {driver: postgres, query: SELECT 1, dsn: "`+dsn+`"}
`, nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "tenants[1].source.sql.dsn", "must not be written in the file") {
			t.Errorf("problems = %v", ps)
		}
		if strings.Contains(err.Error(), "dsn-pa55word") {
			t.Errorf("error shows the DSN")
		}
	})
	t.Run("an invalid store URL is refused without being shown", func(t *testing.T) {
		_, err := load(t, minimal+"store:\n  url: \"postgres://u:"+storePass+"@host:notaport/db\"\n", nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "store.url", "not a valid PostgreSQL URL") {
			t.Errorf("problems = %v", ps)
		}
		if strings.Contains(err.Error(), storePass) {
			t.Errorf("error shows the password")
		}
	})
}

func TestRedactConn(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"sqlite", "sqlite:hrsync.db", "sqlite:hrsync.db"},
		{"url without password", "postgres://hrsync@db/hr", "postgres://hrsync@db/hr"},
		{"url with password", "postgres://hrsync:pw@db/hr?sslmode=require", "postgres://hrsync:xxxxx@db/hr?sslmode=require"},
		{"password in query", "postgres://db/hr?user=a&password=pw", "postgres://db/hr?user=a&password=xxxxx"},
		{"key value", "host=db user=a password=pw dbname=hr", "host=db user=a password=xxxxx dbname=hr"},
		{"key value quoted", "host=db password='p w' dbname=hr", "host=db password=xxxxx dbname=hr"},
		{"mysql style", "user:pw@tcp(db:3306)/hr", "[redacted]"},
		{"empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := NewConnURL(c.in).String(); got != c.want {
				t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	file := `api:
  timout: 3s
  burst: many
  ratePerSecond: 0
log:
  level: loud
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000005
    collectionId: 20000000-0000-4000-8000-000000000006
    source:
      csv:
        dir: drop
        delimiter: "|"
    safeguards:
      maxDepartedRatio: 1.5
    personalize:
      windowBefore: 3x
  - name: Bad/Name
    source:
      csv: {dir: drop}
      sql: {driver: oracle, query: SELECT 1, dsnEnv: HR_DSN, bogus: 1}
    schedules:
      people: every minute
`
	_, err := load(t, file, map[string]string{"HR_DSN": "x"})
	ps := problemsOf(t, err)
	want := []struct {
		path, reason string
		line         int
	}{
		{"api.timout", `unknown key "timout"`, 2},
		{"api.burst", `must be a whole number, not "many"`, 3},
		{"api.ratePerSecond", "must be greater than 0", 4},
		{"log.level", "must be one of", 6},
		{"tenants[0].source.csv.delimiter", "is not one of", 14},
		{"tenants[0].safeguards.maxDepartedRatio", "must be between 0 and 1", 16},
		{"tenants[0].personalize.windowBefore", `"3x" is not a duration`, 18},
		{"tenants[1].name", "lower-case letters", 19},
		{"tenants[1].companyId", "is required", 19},
		{"tenants[1].collectionId", "is required", 19},
		{"tenants[1].source", "exactly one of csv, scim and sql", 20},
		{"tenants[1].source.sql.bogus", `unknown key "bogus"`, 22},
		{"tenants[1].source.sql.driver", "is not one of postgres, mysql", 22},
		{"tenants[1].schedules.people", "invalid cron spec", 24},
	}
	for _, w := range want {
		t.Run(w.path, func(t *testing.T) {
			i := slices.IndexFunc(ps, func(p Problem) bool { return p.Path == w.path && strings.Contains(p.Reason, w.reason) })
			if i < 0 {
				t.Fatalf("no problem %s: %s in\n%v", w.path, w.reason, err)
			}
			if ps[i].Line != w.line {
				t.Errorf("line = %d, want %d", ps[i].Line, w.line)
			}
		})
	}
	t.Run("nothing else", func(t *testing.T) {
		if len(ps) != len(want) {
			t.Errorf("%d problems, want %d:\n%v", len(ps), len(want), err)
		}
	})
	t.Run("in file order", func(t *testing.T) {
		if !slices.IsSortedFunc(ps, func(a, b Problem) int { return a.Line - b.Line }) {
			t.Errorf("problems out of order:\n%v", err)
		}
	})
	t.Run("message", func(t *testing.T) {
		msg := err.Error()
		if !strings.Contains(msg, "14 problems:") || !strings.Contains(msg, "\n  tenants[0].safeguards.maxDepartedRatio: must be between 0 and 1 (line 16)") {
			t.Errorf("message:\n%s", msg)
		}
	})
}

func TestUnknownKeys(t *testing.T) {
	cases := []struct {
		name, file, path string
		line             int
	}{
		{"top level", "tenant:\n  - name: x\n" + minimal, "tenant", 1},
		{"in api", minimal + "api:\n  tokn: x\n", "api.tokn", 10},
		{"in a tenant", minimal + "    companyID: typo\n", "tenants[0].companyID", 9},
		{"in a source", minimal + "        patern: '*.txt'\n", "tenants[0].source.csv.patern", 9},
		{"in a second tenant", minimal + "  - name: b\n    safeguard: {}\n", "tenants[1].safeguard", 10},
		{"a secret key in the file", minimal + "api:\n  token: abc\n", "api.token", 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.file, nil)
			ps := problemsOf(t, err)
			i := slices.IndexFunc(ps, func(p Problem) bool { return p.Path == c.path })
			if i < 0 {
				t.Fatalf("no problem at %s:\n%v", c.path, err)
			}
			if !strings.HasPrefix(ps[i].Reason, "unknown key") || ps[i].Line != c.line {
				t.Errorf("problem = %+v, want unknown key on line %d", ps[i], c.line)
			}
		})
	}
}

func TestTenants(t *testing.T) {
	t.Run("several tenants with their own policies", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "dsn", "postgres://hr@hr-db/people\n")
		cfg, err := Load(writeFile(t, dir, "c.yaml", minimal+`
    people: {batchSize: 50, defaultBalance: 25}
  - name: globex_eu
    companyId: 10000000-0000-4000-8000-000000000003
    collectionId: 20000000-0000-4000-8000-000000000004
    source:
      sql:
        driver: mysql
        dsnFile: dsn
        query: SELECT * FROM employees
        columns: {externalId: emp_no, email: mail, firstName: given, lastName: family}
    safeguards: {maxDepartedRatio: 0.05, minPopulation: 10}
    personalize:
      collections: [30000000-0000-4000-8000-000000000001, 30000000-0000-4000-8000-000000000002]
    schedules: {people: "0 */5 * * * *", orders: "@hourly"}
`), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if len(cfg.Tenants) != 2 {
			t.Fatalf("tenants = %d", len(cfg.Tenants))
		}
		a, ok := cfg.Tenant("acme")
		if !ok || a.People.BatchSize != 50 || a.People.DefaultBalance != 25 || a.Safeguards.MaxDepartedRatio != 0.2 {
			t.Errorf("acme = %+v", a)
		}
		g, ok := cfg.Tenant("globex_eu")
		if !ok || g.Source.Kind() != "sql" || g.People.BatchSize != 100 {
			t.Fatalf("globex_eu = %+v", g)
		}
		if sqlOf(t, *g).DSN != "postgres://hr@hr-db/people" || sqlOf(t, *g).Driver != "mysql" {
			t.Errorf("sql source not resolved")
		}
		if sqlOf(t, *g).Mapping.Columns["externalId"] != "emp_no" || len(sqlOf(t, *g).Mapping.Columns) != 4 {
			t.Errorf("columns = %v", sqlOf(t, *g).Mapping.Columns)
		}
		if g.Safeguards != (Safeguards{MaxDepartedRatio: 0.05, MinRowsRatio: 0.8, MaxRejectedRatio: 0.1, MinPopulation: 10}) {
			t.Errorf("safeguards = %+v", g.Safeguards)
		}
		if !slices.Equal(g.Personalize.Collections, []string{"30000000-0000-4000-8000-000000000001", "30000000-0000-4000-8000-000000000002"}) || g.Schedules.Orders != "@hourly" {
			t.Errorf("personalize %+v schedules %+v", g.Personalize, g.Schedules)
		}
		if _, ok := cfg.Tenant("nobody"); ok {
			t.Errorf("found a tenant that does not exist")
		}
	})
	t.Run("duplicate names", func(t *testing.T) {
		_, err := load(t, minimal+"  - name: acme\n    companyId: 10000000-0000-4000-8000-000000000007\n    collectionId: 20000000-0000-4000-8000-000000000008\n    source: {csv: {dir: d}}\n", nil)
		ps := problemsOf(t, err)
		if len(ps) != 1 || !hasProblem(ps, "tenants[1].name", `"acme" is already the name of tenants[0]`) || ps[0].Line != 9 {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("names safe for files and locks", func(t *testing.T) {
		for _, name := range []string{"Acme", "../etc", "a b", "-lead", "", strings.Repeat("a", 64), "é"} {
			t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
				_, err := load(t, strings.Replace(minimal, "name: acme", fmt.Sprintf("name: %q", name), 1), nil)
				if ps := problemsOf(t, err); !hasProblem(ps, "tenants[0].name", "") || len(ps) != 1 {
					t.Errorf("problems = %v", ps)
				}
			})
		}
		for _, name := range []string{"acme", "acme-eu_2", "0day", strings.Repeat("a", 63)} {
			t.Run(name, func(t *testing.T) {
				mustLoad(t, strings.Replace(minimal, "name: acme", "name: "+name, 1), nil)
			})
		}
	})
	t.Run("no tenant", func(t *testing.T) {
		_, err := load(t, "log: {level: info}\n", nil)
		if ps := problemsOf(t, err); !hasProblem(ps, "tenants", "at least one tenant") {
			t.Errorf("problems = %v", ps)
		}
	})
}

func TestSourceRule(t *testing.T) {
	base := "tenants:\n  - name: acme\n    companyId: 10000000-0000-4000-8000-000000000007\n    collectionId: 20000000-0000-4000-8000-000000000008\n"
	cases := []struct {
		name, source, path, reason string
	}{
		{"none", "", "tenants[0].source", "set exactly one of csv, scim and sql"},
		{"empty", "    source: {}\n", "tenants[0].source", "set exactly one of csv, scim and sql"},
		{"both", "    source:\n      csv: {dir: d}\n      sql: {driver: postgres, query: q, dsnEnv: HR_DSN}\n", "tenants[0].source", "not both"},
		{"sql without a dsn", "    source:\n      sql: {driver: postgres, query: q}\n", "tenants[0].source.sql", "set dsnEnv"},
		{"sql with two dsns", "    source:\n      sql: {driver: postgres, query: q, dsnEnv: HR_DSN, dsnFile: f}\n", "tenants[0].source.sql", "not both"},
		{"sql with a bad env name", "    source:\n      sql: {driver: postgres, query: q, dsnEnv: 'postgres://x'}\n", "tenants[0].source.sql.dsnEnv", "name of an environment variable"},
		{"csv without dir", "    source:\n      csv: {pattern: '*.csv'}\n", "tenants[0].source.csv.dir", "is empty"},
		{"csv mapping without email", "    source:\n      csv: {dir: d, columns: {externalId: id}}\n", "tenants[0].source.csv.columns.email", "required field has no column"},
		{"csv bad date layout", "    source:\n      csv: {dir: d, dateLayouts: {startDate: 'MM/DD/YYYY'}}\n", "tenants[0].source.csv.dateLayouts.startDate", "full date"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, base+c.source, map[string]string{"HR_DSN": "x"})
			ps := problemsOf(t, err)
			if !hasProblem(ps, c.path, c.reason) {
				t.Errorf("no problem %s: %s in\n%v", c.path, c.reason, err)
			}
		})
	}
	t.Run("sql with dsnEnv", func(t *testing.T) {
		cfg := mustLoad(t, base+"    source:\n      sql: {driver: postgres, query: q, dsnEnv: HR_DSN}\n", map[string]string{"HR_DSN": "postgres://h/db"})
		if sqlOf(t, cfg.Tenants[0]).DSN != "postgres://h/db" {
			t.Errorf("DSN not resolved")
		}
	})
}

func TestRanges(t *testing.T) {
	cases := []struct {
		name, yaml, path, reason string
	}{
		{"departed ratio above 1", "    safeguards: {maxDepartedRatio: 1.01}\n", "tenants[0].safeguards.maxDepartedRatio", "must be between 0 and 1"},
		{"rows ratio negative", "    safeguards: {minRowsRatio: -0.1}\n", "tenants[0].safeguards.minRowsRatio", "must be between 0 and 1"},
		{"rejected ratio NaN", "    safeguards: {maxRejectedRatio: .nan}\n", "tenants[0].safeguards.maxRejectedRatio", "must be between 0 and 1"},
		{"negative population", "    safeguards: {minPopulation: -1}\n", "tenants[0].safeguards.minPopulation", "must not be negative"},
		{"batch size zero", "    people: {batchSize: 0}\n", "tenants[0].people.batchSize", "at least 1"},
		{"negative balance", "    people: {defaultBalance: -5}\n", "tenants[0].people.defaultBalance", "must not be negative"},
		{"balance NaN", "    people: {defaultBalance: .nan}\n", "tenants[0].people.defaultBalance", "finite"},
		{"balance above the source's maximum", "    people: {defaultBalance: 200000}\n", "tenants[0].people.defaultBalance", "maxBalance (100000)"},
		{"record lines negative", "        maxRecordLines: -1\n", "tenants[0].source.csv.maxRecordLines", "must not be negative"},
		{"record bytes too small", "        maxRecordBytes: 10\n", "tenants[0].source.csv.maxRecordBytes", "at least 1024"},
		{"value length negative", "        maxValueLength: -1\n", "tenants[0].source.csv.maxValueLength", "must not be negative"},
		{"max balance infinite", "        maxBalance: .inf\n", "tenants[0].source.csv.maxBalance", "finite"},
		{"grant reason with a slash", "    people: {grantReason: a/b}\n", "tenants[0].people.grantReason", "lower-case"},
		{"negative window", "    personalize: {windowAfter: -1d}\n", "tenants[0].personalize.windowAfter", "must not be negative"},
		{"duplicate collection", "    personalize: {collections: [30000000-0000-4000-8000-000000000001, 30000000-0000-4000-8000-000000000001]}\n", "tenants[0].personalize.collections[1]", "listed twice"},
		{"country", "    orders: {country: France}\n", "tenants[0].orders.country", "ISO 3166-1"},
		{"language", "    orders: {language: 'not a tag!'}\n", "tenants[0].orders.language", "language tag"},
		{"chunk", "    orders: {userIdsChunk: 0}\n", "tenants[0].orders.userIdsChunk", "at least 1"},
		{"zero timeout", "api: {timeout: 0s}\n", "api.timeout", "greater than 0"},
		{"base url", "api: {baseUrl: 'ftp://x'}\n", "api.baseUrl", "http or https"},
		{"base url with credentials", "api: {baseUrl: 'https://u:p@x'}\n", "api.baseUrl", "without credentials"},
		{"plain http to another host", "api: {baseUrl: 'http://platform.example.com'}\n", "api.baseUrl", "in clear"},
		{"plain http to a private address", "api: {baseUrl: 'http://10.1.2.3:8080'}\n", "api.baseUrl", "allowInsecureHTTP"},
		{"listen", "http: {listen: 'localhost'}\n", "http.listen", "host:port"},
		{"timezone", "timezone: Mars/Olympus\n", "timezone", "unknown time zone"},
		{"store scheme", "store: {url: 'mysql://x'}\n", "store.url", "sqlite: or postgres://"},
		{"store schema", "store: {schema: 'Drop Table'}\n", "store.schema", "SQL identifier"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantOnlyProblem(t, minimal+c.yaml, c.path, c.reason) })
	}
	t.Run("plain http to loopback, or allowed on purpose, is accepted", func(t *testing.T) {
		for _, api := range []string{"{baseUrl: 'http://127.0.0.1:8080'}", "{baseUrl: 'http://127.8.9.10'}", "{baseUrl: 'http://localhost:1'}",
			"{baseUrl: 'http://[::1]:8080'}", "{baseUrl: 'https://platform.example.com'}",
			"{baseUrl: 'http://platform.example.com', allowInsecureHTTP: true}"} {
			cfg := mustLoad(t, minimal+"api: "+api+"\n", nil)
			if insecure := cfg.API.InsecureHTTP(); insecure != strings.Contains(api, "allowInsecureHTTP") {
				t.Errorf("%s: InsecureHTTP() = %v", api, insecure)
			}
		}
	})
	t.Run("limits have their defaults, and can be set", func(t *testing.T) {
		cfg := mustLoad(t, minimal, nil)
		c := csvOf(t, cfg.Tenants[0])
		if c.MaxRecordLines != 20 || c.MaxRecordBytes != 64<<20 || c.Mapping.MaxValueLength != 1000 || c.Mapping.MaxBalance != 100000 || c.Mapping.Identifiers.AllowNonLatin {
			t.Errorf("defaults: %+v", c.CSVOptions)
		}
		cfg = mustLoad(t, minimal+"        maxRecordLines: 5\n        maxBalance: 250\n        identifiers: {allowNonLatin: true}\n", nil)
		if c := csvOf(t, cfg.Tenants[0]); c.MaxRecordLines != 5 || c.Mapping.MaxBalance != 250 || !c.Mapping.Identifiers.AllowNonLatin {
			t.Errorf("set: %+v", c.CSVOptions)
		}
	})
	t.Run("bounds are accepted", func(t *testing.T) {
		cfg := mustLoad(t, minimal+"    safeguards: {maxDepartedRatio: 0, minRowsRatio: 1, maxRejectedRatio: 1, minPopulation: 0}\n    orders: {country: FR, language: fr-CA}\n", nil)
		if cfg.Tenants[0].Safeguards.MinRowsRatio != 1 || cfg.Tenants[0].Orders.Country != "FR" {
			t.Errorf("tenant = %+v", cfg.Tenants[0])
		}
	})
}

func TestDurationsInConfig(t *testing.T) {
	cfg := mustLoad(t, minimal+`
    personalize: {windowBefore: 45d, windowAfter: 1d12h}
    orders: {stopPollingAfter: 120d, productRefresh: 6h}
api: {timeout: 1m30s}
`, nil)
	z, o := cfg.Tenants[0].Personalize, cfg.Tenants[0].Orders
	if z.WindowBefore.Duration != 45*Day || z.WindowAfter.Duration != 36*time.Hour {
		t.Errorf("personalize = %+v", z)
	}
	if o.StopPollingAfter.Duration != 120*Day || o.ProductRefresh.Duration != 6*time.Hour || cfg.API.Timeout.Duration != 90*time.Second {
		t.Errorf("orders %+v api %+v", o, cfg.API)
	}
}

func TestShowRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(writeFile(t, dir, "c.yaml", minimal+"    personalize: {collections: [30000000-0000-4000-8000-000000000001], windowAfter: 36h}\n    orders: {country: US}\n"), noEnv, testKinds, testDialects)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatalf("YAML: %v", err)
	}
	again, err := Load(writeFile(t, dir, "shown.yaml", string(y)), noEnv, testKinds, testDialects)
	if err != nil {
		t.Fatalf("the shown configuration does not load: %v\n%s", err, y)
	}
	if !reflect.DeepEqual(cfg, again) {
		t.Errorf("round trip differs:\n%v\n---\n%v", cfg, again)
	}
}

func TestParseSchedule(t *testing.T) {
	from := time.Date(2025, time.March, 3, 10, 7, 0, 0, time.UTC)
	cases := []struct {
		spec string
		next time.Time
	}{
		{DefaultPeopleCron, time.Date(2025, time.March, 3, 10, 15, 0, 0, time.UTC)},
		{"0 */30 * * * *", time.Date(2025, time.March, 3, 10, 30, 0, 0, time.UTC)},
		{"@hourly", time.Date(2025, time.March, 3, 11, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			s, err := ParseSchedule(c.spec)
			if err != nil {
				t.Fatalf("ParseSchedule: %v", err)
			}
			if got := s.Next(from); !got.Equal(c.next) {
				t.Errorf("Next = %v, want %v", got, c.next)
			}
		})
	}
	t.Run("invalid", func(t *testing.T) {
		if _, err := ParseSchedule("every minute"); err == nil {
			t.Errorf("no error")
		}
	})
}

func TestErrorType(t *testing.T) {
	_, err := load(t, minimal+"api: {burst: 0}\n", nil)
	wrapped := fmt.Errorf("start: %w", err)
	var cerr *Error
	if !errors.As(wrapped, &cerr) {
		t.Fatalf("errors.As does not find *Error in %v", wrapped)
	}
	t.Run("one problem reads on one line", func(t *testing.T) {
		if msg := cerr.Error(); strings.Contains(msg, "\n") || !strings.HasSuffix(msg, ": api.burst: must be at least 1 (line 9)") {
			t.Errorf("message %q", msg)
		}
	})
	t.Run("the file is named", func(t *testing.T) {
		if cerr.File == "" || !strings.Contains(cerr.Error(), cerr.File) {
			t.Errorf("file %q, message %q", cerr.File, cerr.Error())
		}
	})
}
