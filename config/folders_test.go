package config

import (
	"hrsync/sources/dropfolder"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// folderFile is a configuration whose one tenant's drop folder is dir.
func folderFile(dir string) string {
	return strings.Replace(minimal, "dir: drop", "dir: "+dir, 1)
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestFolderChecks(t *testing.T) {
	const dirPath = "tenants[0].source.csv.dir"
	loadChecked := func(t *testing.T, content string, checks Checks) (*Config, error) {
		t.Helper()
		return LoadChecked(writeFile(t, t.TempDir(), "hrsync.yaml", content), noEnv, testKinds, testDialects, checks)
	}
	t.Run("a missing folder is a problem at its key and line", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "absent")
		for _, access := range []FolderAccess{FoldersReadable, FoldersWritable} {
			_, err := loadChecked(t, folderFile(missing), Checks{Folders: access})
			ps := problemsOf(t, err)
			if len(ps) != 1 || !hasProblem(ps, dirPath, "folder "+missing+" does not exist") || ps[0].Line != 8 {
				t.Errorf("access %d: problems = %v", access, ps)
			}
		}
	})
	t.Run("nothing is checked unless asked", func(t *testing.T) {
		if _, err := loadChecked(t, folderFile(filepath.Join(t.TempDir(), "absent")), Checks{}); err != nil {
			t.Errorf("Load: %v", err)
		}
	})
	t.Run("a file is not a folder", func(t *testing.T) {
		f := writeFile(t, t.TempDir(), "export.csv", "x")
		_, err := loadChecked(t, folderFile(f), Checks{Folders: FoldersReadable})
		if ps := problemsOf(t, err); !hasProblem(ps, dirPath, "is not a folder") {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("missing archive folders are fine and left to the first archive", func(t *testing.T) {
		drop := t.TempDir()
		if _, err := loadChecked(t, folderFile(drop), Checks{Folders: FoldersWritable}); err != nil {
			t.Fatalf("Load: %v", err)
		}
		st := dropfolder.Check(drop, true)
		if len(st.Problems) != 0 || !slices.Equal(st.Missing, []string{"processed", "failed", "approve"}) {
			t.Errorf("status = %+v", st)
		}
		if names := entries(t, drop); len(names) != 0 {
			t.Errorf("the check left %v in the drop folder", names)
		}
	})
	t.Run("an archive folder that is a file", func(t *testing.T) {
		drop := t.TempDir()
		writeFile(t, drop, "failed", "")
		if err := os.Mkdir(filepath.Join(drop, "processed"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := loadChecked(t, folderFile(drop), Checks{Folders: FoldersWritable})
		ps := problemsOf(t, err)
		if len(ps) != 1 || !hasProblem(ps, dirPath, "failed/: "+filepath.Join(drop, "failed")+" is not a folder") {
			t.Errorf("problems = %v", ps)
		}
		if _, err := loadChecked(t, folderFile(drop), Checks{Folders: FoldersReadable}); err != nil {
			t.Errorf("reading needs no archive folder: %v", err)
		}
	})
	t.Run("a read-only folder", func(t *testing.T) {
		drop := t.TempDir()
		if err := os.Chmod(drop, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(drop, 0o700) })
		st := dropfolder.Check(drop, true)
		if os.Geteuid() == 0 {
			// root writes through permission bits: the probe succeeds and
			// leaves nothing behind.
			if len(st.Problems) != 0 || len(entries(t, drop)) != 0 {
				t.Errorf("as root: status %+v, entries %v", st, entries(t, drop))
			}
		} else if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "is not writable: permission denied") {
			t.Errorf("status = %+v", st)
		}
		if st := dropfolder.Check(drop, false); len(st.Problems) != 0 {
			t.Errorf("a read-only folder is readable: %+v", st)
		}
	})
	t.Run("only the named tenant", func(t *testing.T) {
		good := t.TempDir()
		file := folderFile(good) + `  - name: beta
    companyId: 10000000-0000-4000-8000-000000000009
    collectionId: 20000000-0000-4000-8000-000000000009
    source: {csv: {dir: ` + filepath.Join(good, "absent") + `}}
`
		if _, err := loadChecked(t, file, Checks{Folders: FoldersWritable, Tenant: "acme"}); err != nil {
			t.Errorf("acme's folder is fine: %v", err)
		}
		_, err := loadChecked(t, file, Checks{Folders: FoldersWritable})
		if ps := problemsOf(t, err); len(ps) != 1 || !hasProblem(ps, "tenants[1].source.csv.dir", "does not exist") || ps[0].Line != 12 {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("listed with the file's own problems", func(t *testing.T) {
		file := folderFile(filepath.Join(t.TempDir(), "absent")) + "    people: {batchSize: 0}\n"
		_, err := loadChecked(t, file, Checks{Folders: FoldersWritable})
		ps := problemsOf(t, err)
		if len(ps) != 2 || !hasProblem(ps, dirPath, "does not exist") || !hasProblem(ps, "tenants[0].people.batchSize", "at least 1") {
			t.Errorf("problems = %v", ps)
		}
	})
}

// TestRelativePaths checks that paths written in the file are taken from
// the file's folder and paths from the environment or a secret file from
// the working directory, whatever the working directory is.
func TestRelativePaths(t *testing.T) {
	base := t.TempDir()
	cfgDir := filepath.Join(base, "etc")
	work := filepath.Join(base, "work")
	for _, d := range []string{cfgDir, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, cfgDir, "token", "file-token\n")
	writeFile(t, cfgDir, "dsn", "postgres://hr@hr-db/people\n")
	writeFile(t, cfgDir, "store-url", "sqlite:from-secret.db\n")
	writeFile(t, work, "env-token", "env-token\n")
	file := `store:
  url: sqlite:state/hrsync.db
api:
  tokenFile: token
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source: {csv: {dir: drop}}
  - name: beta
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source: {sql: {driver: postgres, query: SELECT 1, dsnFile: dsn}}
`
	path := writeFile(t, cfgDir, "hrsync.yaml", file)
	t.Chdir(work)

	t.Run("paths in the file are from the file's folder", func(t *testing.T) {
		cfg, err := Load(filepath.Join("..", "etc", "hrsync.yaml"), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got, want := cfg.Store.URL.Value(), "sqlite:"+filepath.Join(cfgDir, "state", "hrsync.db"); got != want {
			t.Errorf("store.url = %q, want %q", got, want)
		}
		if cfg.API.TokenFile != filepath.Join(cfgDir, "token") || cfg.API.Token.Value() != "file-token" {
			t.Errorf("tokenFile = %q", cfg.API.TokenFile)
		}
		if csvOf(t, cfg.Tenants[0]).Dir != filepath.Join(cfgDir, "drop") {
			t.Errorf("dir = %q", csvOf(t, cfg.Tenants[0]).Dir)
		}
		if sql := sqlOf(t, cfg.Tenants[1]); sql.DSNFile != filepath.Join(cfgDir, "dsn") || sql.DSN == "" {
			t.Errorf("dsnFile = %q", sql.DSNFile)
		}
		if got := cfg.Store.Location(); got != "SQLite file "+filepath.Join(cfgDir, "state", "hrsync.db") {
			t.Errorf("Location = %q", got)
		}
	})
	t.Run("paths from the environment are from the working directory", func(t *testing.T) {
		cfg, err := Load(path, envMap(map[string]string{EnvStoreURL: "sqlite:env.db", EnvAPITokenFile: "env-token"}), testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got, want := cfg.Store.URL.Value(), "sqlite:"+filepath.Join(work, "env.db"); got != want {
			t.Errorf("store.url = %q, want %q", got, want)
		}
		if cfg.API.Token.Value() != "env-token" {
			t.Errorf("the token file of the environment was not read from the working directory")
		}
	})
	t.Run("a URL read from a secret file is from the working directory", func(t *testing.T) {
		cfg, err := Load(writeFile(t, cfgDir, "secret.yaml", strings.Replace(file, "url: sqlite:state/hrsync.db", "urlFile: store-url", 1)), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got, want := cfg.Store.URL.Value(), "sqlite:"+filepath.Join(work, "from-secret.db"); got != want {
			t.Errorf("store.url = %q, want %q", got, want)
		}
	})
	t.Run("a PostgreSQL store names its schema", func(t *testing.T) {
		cfg, err := Load(path, envMap(map[string]string{EnvStoreURL: "postgres://hrsync:pw@db:5432/hr"}), testKinds, testDialects)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if got := cfg.Store.Location(); got != "PostgreSQL postgres://hrsync:xxxxx@db:5432/hr, schema hrsync" {
			t.Errorf("Location = %q", got)
		}
	})
}

// TestSourcesAside checks that a load for status sets each tenant's source
// problems (a folder missing, a DSN variable not set) aside with their
// paths and lines, keeps failing on the rest of the file, and that any
// other load still fails on them.
func TestSourcesAside(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	content := folderFile(missing) + `  - name: globex
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      sql:
        driver: postgres
        dsnEnv: HR_DSN_NOT_SET
        query: SELECT 1
        columns: {externalId: a, email: b, firstName: c, lastName: d}
`
	file := writeFile(t, t.TempDir(), "hrsync.yaml", content)
	aside := Checks{Folders: FoldersReadable, SourcesAside: true}
	cfg, err := LoadChecked(file, noEnv, testKinds, testDialects, aside)
	if err != nil {
		t.Fatalf("a load with SourcesAside failed on source problems: %v", err)
	}
	want := map[string]string{
		"acme":   "tenants[0].source.csv.dir: folder " + missing + " does not exist (line 8)",
		"globex": "tenants[1].source.sql.dsnEnv: environment variable HR_DSN_NOT_SET is not set (line 15)",
	}
	for _, tn := range cfg.Tenants {
		if len(tn.SourceProblems) != 1 || tn.SourceProblems[0].String() != want[tn.Name] {
			t.Errorf("tenant %s: source problems %v, want %q", tn.Name, tn.SourceProblems, want[tn.Name])
		}
	}
	if _, err := LoadChecked(file, noEnv, testKinds, testDialects, Checks{Folders: FoldersReadable}); len(problemsOf(t, err)) != 2 {
		t.Errorf("a load without SourcesAside: %v, want both problems", err)
	}
	bad := writeFile(t, t.TempDir(), "hrsync.yaml", "log: {level: loud}\n"+content)
	_, err = LoadChecked(bad, noEnv, testKinds, testDialects, aside)
	if ps := problemsOf(t, err); len(ps) != 1 || ps[0].Path != "log.level" {
		t.Errorf("a load with SourcesAside and a bad log.level: problems %v, want only log.level's", ps)
	}
}

// TestPeekLog checks the log settings read from a file that cannot be
// loaded: the environment wins over the file, a file that is not YAML or
// is missing gives the defaults.
func TestPeekLog(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "hrsync.yaml", "log: {format: json, level: warn}\ntenants: 3\n")
	if got := PeekLog(file, noEnv); got.Format != "json" || got.Level != "warn" {
		t.Errorf("from the file: %+v", got)
	}
	if got := PeekLog(file, envMap(map[string]string{EnvLogFormat: "console"})); got.Format != "console" || got.Level != "warn" {
		t.Errorf("with %s: %+v", EnvLogFormat, got)
	}
	broken := writeFile(t, dir, "broken.yaml", "log: [\n")
	for _, p := range []string{broken, filepath.Join(dir, "absent.yaml"), ""} {
		if got := PeekLog(p, noEnv); got != Default().Log {
			t.Errorf("PeekLog(%q) = %+v, want the defaults", p, got)
		}
	}
}
