package devsetup_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script is tools/test-db.sh, from this package's folder.
var script = filepath.Join("..", "..", "tools", "test-db.sh")

// adminURL is the PostgreSQL login the script uses by default, on the
// server's own database.
const adminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// runScript runs tools/test-db.sh with the two variables naming a
// database of their own, and returns its output; it fails the test
// unless the script exits 0.
func runScript(t *testing.T, pgURL, mysqlDSN string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "HRSYNC_TEST_POSTGRES_URL="+pgURL, "HRSYNC_TEST_MYSQL_DSN="+mysqlDSN)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tools/test-db.sh: %v\n%s", err, out)
	}
	return string(out)
}

// query runs a statement with a command-line client and returns what it
// prints.
func query(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestTestDBCreatesTheDatabases runs `make test-db`'s script on the
// loopback servers the tests use, for databases of this test's own: the
// first run creates both, a second finds them and changes nothing.
func TestTestDBCreatesTheDatabases(t *testing.T) {
	db := fmt.Sprintf("hrsync_testdb_%d", os.Getpid())
	pgURL := "postgres://postgres@127.0.0.1:5432/" + db + "?sslmode=disable"
	mysqlDSN := "root@tcp(127.0.0.1:3306)/" + db + "?parseTime=true"
	mariadb := func(stmt string) string {
		return query(t, "mariadb", "--protocol=tcp", "-h", "127.0.0.1", "-uroot", "-N", "-e", stmt)
	}
	t.Cleanup(func() {
		_ = exec.Command("psql", adminURL, "-qc", `drop database if exists "`+db+`"`).Run()
		_ = exec.Command("mariadb", "--protocol=tcp", "-h", "127.0.0.1", "-uroot", "-e", "drop database if exists `"+db+"`").Run()
	})

	out := runScript(t, pgURL, mysqlDSN)
	if !strings.Contains(out, "PostgreSQL database "+db+" created") {
		t.Errorf("first run does not say it created the PostgreSQL database:\n%s", out)
	}
	if got := query(t, "psql", pgURL, "-tAc", "select current_database()"); got != db {
		t.Errorf("PostgreSQL: the URL's database is %q, want %q", got, db)
	}
	if got := mariadb("select schema_name from information_schema.schemata where schema_name = '" + db + "'"); got != db {
		t.Errorf("MariaDB: no database %s after the script (%q)", db, got)
	}
	// A table in each, which a second run must leave in place.
	query(t, "psql", pgURL, "-qc", "create table kept (id int)")
	mariadb("create table `" + db + "`.kept (id int)")

	out = runScript(t, pgURL, mysqlDSN)
	if !strings.Contains(out, "PostgreSQL database "+db+" exists") {
		t.Errorf("second run does not find the PostgreSQL database:\n%s", out)
	}
	if got := query(t, "psql", pgURL, "-tAc", "select count(*) from kept"); got != "0" {
		t.Errorf("PostgreSQL: the second run lost the table (%q)", got)
	}
	if got := mariadb("select count(*) from `" + db + "`.kept"); got != "0" {
		t.Errorf("MariaDB: the second run lost the table (%q)", got)
	}
}

// TestTestDBSaysWhatTheServerNeeds runs the script with a login the
// server refuses: it fails, saying what the server needs.
func TestTestDBSaysWhatTheServerNeeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "HRSYNC_TEST_POSTGRES_URL=postgres://no_such_role_hrsync@127.0.0.1:5432/test?sslmode=disable")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the script accepted a login the server refuses:\n%s", out)
	}
	if !strings.Contains(string(out), "host all all 127.0.0.1/32 trust") {
		t.Errorf("the failure does not say what pg_hba.conf needs:\n%s", out)
	}
}
