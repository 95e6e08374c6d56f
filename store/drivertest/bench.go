package drivertest

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"hrsync/store"
)

// benchPeople is how many people each benchmark operation seeds or scans.
const benchPeople = 100_000

func benchRows(n int) []store.PersonRow {
	rows := make([]store.PersonRow, n)
	for i := range rows {
		rows[i] = person(fmt.Sprintf("b%07d", i), i)
	}
	return rows
}

// rowwiseSeed is the baseline for seeding: one single-row INSERT per person
// through a prepared statement, all in one transaction, on a plain
// database/sql handle. It returns how long it took.
func rowwiseSeed(b *testing.B, bk backend, db *sql.DB, tenant string, rows []store.PersonRow) time.Duration {
	b.Helper()
	q := `INSERT INTO people (tenant, external_id, email, first_name, last_name, department, location,
		start_date, remote_id, fingerprint, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`
	q = bk.q(q)
	start := time.Now()
	tx, err := db.BeginTx(ctx(b), nil)
	must(b, err)
	st, err := tx.PrepareContext(ctx(b), q)
	must(b, err)
	for _, r := range rows {
		if _, err := st.ExecContext(ctx(b), tenant, r.ExternalID, r.Email, r.FirstName, r.LastName, r.Department,
			r.Location, r.StartDate.Format("2006-01-02"), r.Fingerprint, r.FirstSeenAt, r.LastSeenAt); err != nil {
			b.Fatalf("baseline insert: %v", err)
		}
	}
	must(b, st.Close()) //nolint:sqlclosecheck // closed before the commit, as COPY needs
	must(b, tx.Commit())
	return time.Since(start)
}

// rawScan is the baseline for scanning: the same query read into raw bytes
// on a plain database/sql handle, with no mapping to PersonRow.
func rawScan(b *testing.B, bk backend, db *sql.DB, tenant string) (time.Duration, int) {
	b.Helper()
	q := `SELECT external_id, email, first_name, last_name, department, location, start_date, remote_id,
		fingerprint, first_seen_at, last_seen_at, departed_at, created_on_platform_at
		FROM people WHERE tenant = ? ORDER BY external_id`
	q = bk.q(q)
	start := time.Now()
	rows, err := db.QueryContext(ctx(b), q, tenant)
	must(b, err)
	defer func() { _ = rows.Close() }()
	cols := make([]sql.RawBytes, 13)
	dst := make([]any, len(cols))
	for i := range cols {
		dst[i] = &cols[i]
	}
	n := 0
	for rows.Next() {
		must(b, rows.Scan(dst...))
		n++
	}
	must(b, rows.Err())
	return time.Since(start), n
}

// BenchPeople seeds (SavePeople) and scans (ScanPeople) 100k people on
// each store. Besides ns/op it reports people/s and a ratio to a baseline
// measured in the same process on the same database: for seeding,
// x_vs_rowwise is how many times faster the bulk path is than single-row
// inserts; for scanning, x_vs_raw is the store's speed relative to reading
// the same rows raw (1 = no overhead).
func BenchPeople(b *testing.B, d Backend) {
	rows := benchRows(benchPeople)
	{
		b.Run(d.Name, func(b *testing.B) {
			bk := newBackend(b, d)
			s := bk.open(b)
			raw := bk.raw(b)
			baseline := rowwiseSeed(b, bk, raw, "baseline", rows)

			b.Run("seed", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					if err := s.SavePeople(ctx(b), fmt.Sprintf("seed-%d", i), rows); err != nil {
						b.Fatal(err)
					}
				}
				per := b.Elapsed() / time.Duration(i)
				b.ReportMetric(float64(benchPeople)/per.Seconds(), "people/s")
				b.ReportMetric(baseline.Seconds()/per.Seconds(), "x_vs_rowwise")
			})

			b.Run("scan", func(b *testing.B) {
				// Warm the caches once, then keep the best of three raw reads.
				rawScan(b, bk, raw, "baseline")
				var rawTook time.Duration
				for range 3 {
					took, n := rawScan(b, bk, raw, "baseline")
					if n != benchPeople {
						b.Fatalf("baseline scanned %d rows", n)
					}
					if rawTook == 0 || took < rawTook {
						rawTook = took
					}
				}
				i := 0
				for b.Loop() {
					i++
					got := 0
					if err := s.ScanPeople(ctx(b), "baseline", func(store.PersonRow) error {
						got++
						return nil
					}); err != nil {
						b.Fatal(err)
					}
					if got != benchPeople {
						b.Fatalf("scanned %d rows", got)
					}
				}
				per := b.Elapsed() / time.Duration(i)
				b.ReportMetric(float64(benchPeople)/per.Seconds(), "people/s")
				b.ReportMetric(rawTook.Seconds()/per.Seconds(), "x_vs_raw")
			})
		})
	}
}
