package postgres_test

import (
	"strings"
	"testing"

	"hrsync/store"
	_ "hrsync/store/postgres"
	_ "hrsync/store/sqlite"
)

func TestDialectsDescribeWithoutSecrets(t *testing.T) {
	d := store.Dialects{}
	t.Run("a bad URL's problem does not quote its password", func(t *testing.T) {
		got := d.CheckURL("postgres://u:s3cret@%zz/db")
		if got == "" || strings.Contains(got, "s3cret") {
			t.Errorf("CheckURL = %q", got)
		}
	})
	t.Run("an unserved scheme names the registered ones, default first", func(t *testing.T) {
		if got := d.CheckURL("mysql://u:s3cret@h/db"); got != "must start with sqlite: or postgres://" {
			t.Errorf("CheckURL = %q", got)
		}
	})
	t.Run("the location masks the password", func(t *testing.T) {
		if got := d.Location("postgres://u:s3cret@h:5432/db", "hr"); got != "PostgreSQL postgres://u:xxxxx@h:5432/db, schema hr" {
			t.Errorf("Location = %q", got)
		}
		if got := d.Location("postgres://h/db?password=s3cret", "hr"); strings.Contains(got, "s3cret") {
			t.Errorf("Location = %q", got)
		}
	})
	t.Run("no local file", func(t *testing.T) {
		if _, _, ok := d.StateFile("postgres://h/db"); ok {
			t.Error("StateFile ok for PostgreSQL")
		}
		if got := d.ResolveURL("postgres://h/db", "/tmp"); got != "postgres://h/db" {
			t.Errorf("ResolveURL = %q", got)
		}
	})
	t.Run("a relative SQLite file is taken from the folder", func(t *testing.T) {
		if got := d.ResolveURL("sqlite:state/h.db", "/etc/hrsync"); got != "sqlite:/etc/hrsync/state/h.db" {
			t.Errorf("ResolveURL = %q", got)
		}
		if p, missing, ok := d.StateFile("sqlite:/nonexistent/h.db"); !ok || !missing || p != "/nonexistent/h.db" {
			t.Errorf("StateFile = %q %v %v", p, missing, ok)
		}
	})
}
