package people_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"hrsync/apiclient"
	"hrsync/config"
	"hrsync/emulator"
	"hrsync/internal/bench/benchenv"
	"hrsync/internal/emutest"
	"hrsync/internal/storetest"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/people"
	"hrsync/sync/sender"
)

// BenchmarkFirstImportAtRate runs the people sync of N new people
// (HRSYNC_BENCH_RATE_PEOPLE, default 20,000) into an empty state (SQLite,
// and PostgreSQL at HRSYNC_TEST_POSTGRES_URL),
// against the in-process emulator over loopback, with the configuration's
// defaults: api.ratePerSecond, api.burst, api.maxConcurrency, the
// tenant's batch size and concurrency. The calls cannot take less than
// the rate limit's bound, (calls - burst) / rate; of_bound is that bound
// over the run's wall time (1 is the bound; the target is at least 0.95).
// calls_of_bound is the same over the calls alone: from the first call's
// arrival at the emulator to the last one's, as it logged them; lead_s is
// the time from the run's start to the first call's arrival.
//
// HRSYNC_BENCH_RATE_LATENCY (a duration) delays every createPeople answer
// of the emulator, as a distant platform would, and
// HRSYNC_BENCH_RATE_CONCURRENCY replaces the tenant's default concurrency.
// HRSYNC_BENCH_RATE_SERIAL_COMMIT (a duration) makes every intent's and
// outcome's commit first wait that long in one queue shared by all: a
// store slower to commit, as PostgreSQL is when the commits of a tenant's
// people queue on its version row (see timedStore).
//
// It fails when a person is not created exactly once, when the emulator
// answers anything but success, or when the calls the emulator received
// exceed the token bucket (rate, burst) in any window (one call of slack
// for the loopback's jitter).
func BenchmarkFirstImportAtRate(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchFirstImportAtRate(b, storetest.SQLite) })
	b.Run("postgres", func(b *testing.B) { benchFirstImportAtRate(b, storetest.Postgres) })
}

// benchFirstImportAtRate is BenchmarkFirstImportAtRate on the stores open
// opens.
func benchFirstImportAtRate(b *testing.B, open func(testing.TB) storetest.Store) {
	n := benchenv.Count(b, "HRSYNC_BENCH_RATE_PEOPLE", 20000)
	api, tenant := config.Default().API, config.DefaultTenant().People
	tenant.Concurrency = benchenv.Count(b, "HRSYNC_BENCH_RATE_CONCURRENCY", tenant.Concurrency)
	calls := (n + tenant.BatchSize - 1) / tenant.BatchSize
	bound := time.Duration(float64(max(calls-api.Burst, 0)) / api.RatePerSecond * float64(time.Second))
	var wall, callsWall, lead time.Duration
	runs := 0
	times := &phaseTimes{}
	for b.Loop() {
		b.StopTimer()
		w := newRateWorld(b, open(b).St, api, tenant, n, times)
		b.StartTimer()
		began := time.Now()
		rep, err := w.job.RunOnce(b.Context(), feed(w.file), people.RunFlags{})
		took := time.Since(began)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if got := rep.Outcome(); got != model.OutcomeOK {
			b.Fatalf("outcome %s, want ok: %+v", got, rep.Exports)
		}
		first, last := w.check(b, n, calls)
		callsWall += last.Sub(first)
		lead += first.Sub(began)
		wall += took
		runs++
		b.StartTimer()
	}
	perRun := wall / time.Duration(runs)
	perCalls := callsWall / time.Duration(runs)
	b.ReportMetric(float64(calls), "calls")
	b.ReportMetric((lead / time.Duration(runs)).Seconds(), "lead_s")
	b.ReportMetric(bound.Seconds(), "bound_s")
	b.ReportMetric(perRun.Seconds(), "wall_s")
	b.ReportMetric(float64(n)/perRun.Seconds(), "people/s")
	b.ReportMetric(float64(calls)/perRun.Seconds(), "calls/s")
	b.ReportMetric(bound.Seconds()/perRun.Seconds(), "of_bound")
	b.ReportMetric(bound.Seconds()/perCalls.Seconds(), "calls_of_bound")
	b.ReportMetric(mean(times.intent, times.intents), "intent_ms")
	b.ReportMetric(mean(times.call, times.calls), "call_ms")
	b.ReportMetric(mean(times.rateWait, times.calls), "ratewait_ms")
	b.ReportMetric(mean(times.http, times.https), "http_ms")
	b.ReportMetric(mean(times.finish, times.finishes), "outcome_ms")
}

// rateWorld is one run's world: an empty SQLite state, a fresh emulator
// over loopback, a client and a job with the configuration's defaults,
// and the export of n new people.
type rateWorld struct {
	emu  *emulator.Emulator
	st   *store.Store
	job  *people.Job
	file *file
	api  config.API
}

func newRateWorld(b *testing.B, st *store.Store, api config.API, tenant config.People, n int, times *phaseTimes) *rateWorld {
	b.Helper()
	emu := emutest.New(b)
	if v := os.Getenv("HRSYNC_BENCH_RATE_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("HRSYNC_BENCH_RATE_LATENCY=%q: %v", v, err)
		}
		if _, err := emu.AddFault(emulator.Fault{Operation: "createPeople", Latency: emulator.Duration(d), Rate: 1}); err != nil {
			b.Fatal(err)
		}
	}
	serial := time.Duration(0)
	if v := os.Getenv("HRSYNC_BENCH_RATE_SERIAL_COMMIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("HRSYNC_BENCH_RATE_SERIAL_COMMIT=%q: %v", v, err)
		}
		serial = d
	}
	srv := httptest.NewServer(emu)
	b.Cleanup(srv.Close)
	client, err := apiclient.New(apiclient.Config{
		BaseURL: srv.URL, Token: emutest.Token, UserAgentVersion: "bench",
		Timeout: api.Timeout.Duration, RatePerSecond: api.RatePerSecond, Burst: api.Burst,
		MaxConcurrency: api.MaxConcurrency, MaxAttempts: api.MaxAttempts, Observer: times.observer(),
	})
	if err != nil {
		b.Fatal(err)
	}
	job, err := people.New(people.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		BatchSize: tenant.BatchSize, Concurrency: tenant.Concurrency, DefaultBalance: 10,
		Safeguards: people.DefaultSafeguards(),
	}, st, sender.NewJournal(timedStore{Store: st, times: times, serial: serial, queue: &sync.Mutex{}}), timedCreator{Creator: client, times: times}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return &rateWorld{emu: emu, st: st, job: job, file: writeExport(b, b.TempDir(), "new.csv", genPeople(n)), api: api}
}

// check fails b unless every person was created once with their balance,
// every call succeeded, and the calls kept to the rate limit; it returns
// when the first call and the last one arrived.
func (w *rateWorld) check(b *testing.B, n, calls int) (first, last time.Time) {
	b.Helper()
	var times []time.Time
	for _, r := range w.emu.Requests() {
		if r.OperationID != "createPeople" {
			continue
		}
		if r.Status < http.StatusOK || r.Status >= http.StatusMultipleChoices {
			b.Fatalf("createPeople answered %d (%s), want only success (no 429)", r.Status, r.Fault)
		}
		times = append(times, r.Time)
	}
	if len(times) != calls {
		b.Fatalf("%d createPeople calls, want %d", len(times), calls)
	}
	created := map[string]int{}
	for _, c := range w.emu.State().Companies {
		for _, p := range c.People {
			if p.ExternalID != "" && p.Balance == 10 {
				created[p.ExternalID]++
			}
		}
	}
	for _, p := range genPeople(n) {
		if created[p.id] != 1 {
			b.Fatalf("person %s created %d times with the balance, want once", p.id, created[p.id])
		}
	}
	checkBucket(b, times, w.api.RatePerSecond, w.api.Burst)
	return times[0], times[len(times)-1]
}

// checkBucket fails b when some window [times[i], times[j]] of the calls
// holds more than burst + rate x window calls, plus one for jitter.
func checkBucket(b *testing.B, times []time.Time, ratePerSecond float64, burst int) {
	b.Helper()
	for i := range times {
		for j := i; j < len(times); j++ {
			window := times[j].Sub(times[i]).Seconds()
			if allowed := float64(burst) + ratePerSecond*window + 1; float64(j-i+1) > allowed {
				b.Fatalf("%d calls within %.3f s: the limit allows %.1f", j-i+1, window, allowed-1)
			}
		}
	}
}
