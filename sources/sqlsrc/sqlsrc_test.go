package sqlsrc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/sourcestest"
)

// server is one database the tests run against.
type server struct {
	driver string
	env    string
	// ddl types of the test table's columns
	dateType, moneyType string
}

func servers() []server {
	return []server{
		{driver: sources.DriverPostgres, env: "HRSYNC_TEST_POSTGRES_URL", dateType: "DATE", moneyType: "NUMERIC(10,2)"},
		{driver: sources.DriverMySQL, env: "HRSYNC_TEST_MYSQL_DSN", dateType: "DATE", moneyType: "DECIMAL(10,2)"},
	}
}

// dsn returns the server's DSN from the environment; a missing variable
// fails the test.
func (s server) dsn(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv(s.env)
	if dsn == "" {
		t.Fatalf("%s is not set: the SQL source tests need a real %s server", s.env, s.driver)
	}
	return dsn
}

// createTable makes a uniquely named table with the rows and drops it
// when the test ends.
func createTable(t *testing.T, db *sql.DB, s server, rows []string) string {
	t.Helper()
	ctx := context.Background()
	table := "hrsync_people_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	ddl := fmt.Sprintf(`CREATE TABLE %s (
		seq INT PRIMARY KEY,
		emp_id VARCHAR(20),
		email VARCHAR(100),
		first_name VARCHAR(50),
		last_name VARCHAR(50),
		dept VARCHAR(50),
		hire_date %s,
		birth_text VARCHAR(20),
		balance %s)`, table, s.dateType, s.moneyType)
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		t.Fatalf("create table: %v", err)
	}
	t.Cleanup(func() {
		if _, err := db.ExecContext(context.Background(), "DROP TABLE "+table); err != nil {
			t.Errorf("drop table: %v", err)
		}
	})
	for i, r := range rows {
		q := fmt.Sprintf("INSERT INTO %s VALUES (%d, %s)", table, i+1, r)
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("insert row %d: %v", i+1, err)
		}
	}
	return table
}

func testOptions(s server, dsn, query string) sources.SQLOptions {
	return sources.SQLOptions{
		Driver: s.driver,
		DSN:    dsn,
		Query:  query,
		Mapping: sources.Mapping{
			Columns: map[string]string{
				"externalId": "EMP_ID", // case differs from the table's column
				"email":      "Email",
				"firstName":  "first_name",
				"lastName":   "last_name",
				"department": "dept",
				"startDate":  "hire_date",
				"birthDate":  "birth_text",
				"addBalance": "balance",
			},
			DateLayouts: map[string]string{"birthDate": "02.01.2006"},
		},
	}
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func amount(f float64) *float64 { return &f }

func TestReadFromServers(t *testing.T) {
	rows := []string{
		`'00123', ' Ana@Example.COM ', 'Ana', 'López', 'Sales', '2021-03-04', '31.12.1990', 25.50`, // 1 ok: leading zeros, text date
		`'0042', 'bob@example.com', 'Bob', 'Martin', NULL, NULL, NULL, NULL`,                       // 2 NULLs: ok
		`'7', 'c@example.com', NULL, 'Null', NULL, NULL, NULL, NULL`,                               // 3 required NULL
		`'8', 'd@example.com', 'Dee', 'Text', NULL, '2021-01-01', '1990-01-01', 0`,                 // 4 text date off layout
		`'9', 'e@example.com', 'Eve', 'Dup', NULL, NULL, NULL, NULL`,                               // 5 dup id with 6
		`'9', 'f@example.com', 'Fay', 'Dup', NULL, NULL, NULL, NULL`,                               // 6
		`NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`,                                           // 7 blank: skipped
	}
	wantPeople := []model.Person{
		{ExternalID: "00123", Email: "ana@example.com", FirstName: "Ana", LastName: "López", Department: "Sales",
			StartDate: day(2021, time.March, 4), BirthDate: day(1990, time.December, 31), AddBalance: amount(25.5), Line: 1},
		{ExternalID: "0042", Email: "bob@example.com", FirstName: "Bob", LastName: "Martin", Line: 2},
	}
	for _, s := range servers() {
		t.Run(s.driver, func(t *testing.T) {
			dsn := s.dsn(t)
			ctx := context.Background()
			db, err := sql.Open(s.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() }) // after the table's drop: cleanups run last first
			if err := db.PingContext(ctx); err != nil {
				t.Fatalf("%s server not reachable: %v", s.driver, err)
			}
			table := createTable(t, db, s, rows)
			name := "sql:acme"
			wantRejs := []model.Rejection{
				{Source: name, Line: 3, Field: "first_name", Reason: "required value is empty"},
				{Source: name, Line: 4, Field: "birth_text", Reason: `date "19**-**-**" does not match the layout "02.01.2006" (e.g. 31.12.2024)`},
				{Source: name, Line: 5, Field: "EMP_ID", Reason: "duplicate externalId: also on line 6; every occurrence is rejected"},
				{Source: name, Line: 6, Field: "EMP_ID", Reason: "duplicate externalId: first on line 5; every occurrence is rejected"},
			}
			query := "SELECT emp_id, email, first_name, last_name, dept, hire_date, birth_text, balance FROM " + table + " ORDER BY seq"

			check := func(t *testing.T, src *Source) {
				t.Helper()
				var got sourcestest.Result
				st, err := src.Read(ctx, got.Handler())
				people, rejs := got.People, got.Rejections
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				if !reflect.DeepEqual(people, wantPeople) {
					t.Errorf("people:\n got %+v\nwant %+v", people, wantPeople)
				}
				if !reflect.DeepEqual(rejs, wantRejs) {
					t.Errorf("rejections:\n got %+v\nwant %+v", rejs, wantRejs)
				}
				if want := (sources.Stats{Rows: 6, Accepted: 2, Rejected: 4, Skipped: 1}); st != want {
					t.Errorf("stats = %+v, want %+v", st, want)
				}
			}

			t.Run("Open with the DSN", func(t *testing.T) {
				src, err := Open(ctx, "acme", testOptions(s, dsn, query))
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer src.Close()
				if src.Name() != name {
					t.Errorf("Name = %q", src.Name())
				}
				check(t, src)
			})
			if s.driver == sources.DriverMySQL {
				t.Run("DATE columns read as text without parseTime", func(t *testing.T) {
					cfg, err := mysql.ParseDSN(dsn)
					if err != nil {
						t.Fatal(err)
					}
					cfg.ParseTime = false
					src, err := Open(ctx, "acme", testOptions(s, cfg.FormatDSN(), query))
					if err != nil {
						t.Fatalf("Open: %v", err)
					}
					defer src.Close()
					check(t, src)
				})
			}
			t.Run("missing column names it and lists the result's columns", func(t *testing.T) {
				src, err := New(db, "acme", testOptions(s, "", "SELECT emp_id, email, first_name, last_name FROM "+table))
				if err != nil {
					t.Fatal(err)
				}
				_, err = src.Read(ctx, new(sourcestest.Result).Handler())
				var ce *sources.ColumnsError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a ColumnsError", err)
				}
				if !reflect.DeepEqual(ce.Missing, []string{"dept", "hire_date", "birth_text", "balance"}) ||
					!reflect.DeepEqual(ce.Found, []string{"emp_id", "email", "first_name", "last_name"}) {
					t.Errorf("missing %q found %q", ce.Missing, ce.Found)
				}
			})
			t.Run("query error", func(t *testing.T) {
				src, err := New(db, "acme", testOptions(s, "", "SELECT nope FROM "+table))
				if err != nil {
					t.Fatal(err)
				}
				_, err = src.Read(ctx, new(sourcestest.Result).Handler())
				if err == nil || !strings.Contains(err.Error(), "run query") {
					t.Errorf("err = %v, want a query error", err)
				}
			})
		})
	}
}

func TestOpenKeepsSecretsOut(t *testing.T) {
	const secret = "s3cretPassw0rd"
	tests := []struct {
		name, driver, dsn string
	}{
		{"malformed postgres url", sources.DriverPostgres, "postgres://hr:" + secret + "@[::1/db"},
		{"unreachable postgres", sources.DriverPostgres, "postgres://hr:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"},
		{"postgres key=value", sources.DriverPostgres, "host=127.0.0.1 port=1 password=" + secret + " dbname=x sslmode=disable connect_timeout=2"},
		{"malformed mysql dsn", sources.DriverMySQL, "hr:" + secret + "@tcp(127.0.0.1:1"},
		{"unreachable mysql", sources.DriverMySQL, "hr:" + secret + "@tcp(127.0.0.1:1)/db?timeout=2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := sources.SQLOptions{Driver: tt.driver, DSN: tt.dsn, Query: "SELECT 1",
				Mapping: sources.Mapping{Columns: map[string]string{"externalId": "id", "email": "e", "firstName": "f", "lastName": "l"}}}
			_, err := Open(context.Background(), "x", opts)
			if err == nil {
				t.Fatal("Open succeeded")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error leaks the password: %v", err)
			}
			if s := fmt.Sprintf("%v %+v %#v", opts, opts, opts); strings.Contains(s, secret) {
				t.Errorf("formatting the options leaks the DSN: %s", s)
			}
		})
	}
}
