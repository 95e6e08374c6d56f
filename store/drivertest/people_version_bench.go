package drivertest

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"hrsync/store"
)

// benchTriggerPeople is how many people BenchmarkPeopleVersionTriggers
// saves per operation: HRSYNC_BENCH_TRIGGER_PEOPLE, default 100,000.
func benchTriggerPeople(b *testing.B) int {
	b.Helper()
	v := os.Getenv("HRSYNC_BENCH_TRIGGER_PEOPLE")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("HRSYNC_BENCH_TRIGGER_PEOPLE = %q: want a positive number", v)
	}
	return n
}

// dropVersionTriggers removes the triggers that count the people's
// versions from a benchmark's database, for the baseline.
func dropVersionTriggers(b *testing.B, bk backend) {
	b.Helper()
	var stmts []string
	for _, tr := range []string{"people_version_insert", "people_version_update", "people_version_delete"} {
		stmts = append(stmts, bk.d.DropTrigger(tr, "people"))
	}
	raw := bk.raw(b)
	for _, q := range stmts {
		if _, err := raw.ExecContext(ctx(b), q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
}

// BenchPeopleVersionTriggers measures what the version triggers cost
// SavePeople: each operation saves the same N new people (in batches of
// 50,000, as the people benchmark's seed does) into a fresh tenant of a
// database with the triggers and of one without, in turns, then saves them
// all again unchanged (an upsert that bumps nothing). x_vs_no_triggers is
// the time without over the time with (1 = free).
func BenchPeopleVersionTriggers(b *testing.B, d Backend) {
	n := benchTriggerPeople(b)
	rows := benchRows(n)
	const batch = 50_000
	save := func(b *testing.B, s *store.Store, tenant string) time.Duration {
		b.Helper()
		start := time.Now()
		for lo := 0; lo < len(rows); lo += batch {
			if err := s.SavePeople(ctx(b), tenant, rows[lo:min(lo+batch, len(rows))]); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	{
		b.Run(d.Name, func(b *testing.B) {
			with := newBackend(b, d).open(b)
			plainBk := newBackend(b, d)
			plain := plainBk.open(b)
			dropVersionTriggers(b, plainBk)
			var insWith, insPlain, updWith, updPlain time.Duration
			i := 0
			for b.Loop() {
				i++
				tenant := fmt.Sprintf("t%d", i)
				if i%2 == 1 {
					insWith += save(b, with, tenant)
					insPlain += save(b, plain, tenant)
					updWith += save(b, with, tenant)
					updPlain += save(b, plain, tenant)
				} else {
					insPlain += save(b, plain, tenant)
					insWith += save(b, with, tenant)
					updPlain += save(b, plain, tenant)
					updWith += save(b, with, tenant)
				}
			}
			b.ReportMetric(insWith.Seconds()/float64(i), "new_s")
			b.ReportMetric(insPlain.Seconds()/float64(i), "new_no_triggers_s")
			b.ReportMetric(insPlain.Seconds()/insWith.Seconds(), "x_vs_no_triggers")
			b.ReportMetric(updWith.Seconds()/float64(i), "same_s")
			b.ReportMetric(updPlain.Seconds()/updWith.Seconds(), "same_x_vs_no_triggers")
		})
	}
}
