package orders

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"hrsync/emulator"
	"hrsync/internal/bench/benchenv"
	"hrsync/store"
)

// BenchmarkStatusPoll polls N open orders (HRSYNC_BENCH_POLL_ORDERS,
// default 1000) from the in-process emulator over loopback, every status
// call delayed 20 ms by a latency fault at rate 1, with the job's poll
// concurrency. It reports the wall time of one poll beside the bound
// orders x latency / concurrency measured in the same process
// (x_of_bound: 1 is the bound, the target is at most 1.2).
func BenchmarkStatusPoll(b *testing.B) {
	const (
		latency     = 20 * time.Millisecond
		concurrency = 32
	)
	// `make bench` runs with the size, HRSYNC_BENCH_POLL_ORDERS=10000
	// (docs/benchmarks.md); the default keeps a plain `go test -bench` short.
	n := benchenv.Count(b, "HRSYNC_BENCH_POLL_ORDERS", 1000)
	w := newWorld(b, concurrency)
	if err := w.st.SavePeople(b.Context(), "acme", []store.PersonRow{
		{ExternalID: "E1001", Email: "e1001@example.test", RemoteID: emulator.PersonJamesID},
	}); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	rows := make([]store.OrderRow, 0, n)
	for i := range n {
		o := w.place(b, "E1001", now.Add(-time.Duration(i)*time.Second))
		row := store.OrderRow{OrderID: o.ID, CollectionID: o.CollectionID, ExternalID: "E1001", PlacedAt: o.CreatedAt}
		for _, l := range o.LineItems {
			row.Lines = append(row.Lines, store.LineItemRow{LineItemID: l.ID, ProductID: l.ProductID, Quantity: float64(l.Quantity), Price: l.Price})
		}
		rows = append(rows, row)
	}
	if _, err := w.st.UpsertOrders(b.Context(), "acme", rows); err != nil {
		b.Fatal(err)
	}
	j, err := New(Options{Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		PollConcurrency: concurrency}, w.st, w.client, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.emu.AddFault(emulator.Fault{Operation: "getOrderStatus", Latency: emulator.Duration(latency), Rate: 1}); err != nil {
		b.Fatal(err)
	}
	bound := time.Duration(n) * latency / concurrency
	i := 0
	for b.Loop() {
		i++
		rep := &Report{}
		if err := j.poll(b.Context(), zap.NewNop(), rep); err != nil {
			b.Fatal(err)
		}
		if rep.Polled != n || rep.PollErrors != 0 {
			b.Fatalf("polled %d of %d, %d errors", rep.Polled, n, rep.PollErrors)
		}
	}
	per := b.Elapsed() / time.Duration(i)
	b.ReportMetric(float64(n), "orders")
	b.ReportMetric(bound.Seconds(), "bound_s")
	b.ReportMetric(per.Seconds(), "wall_s")
	b.ReportMetric(per.Seconds()/bound.Seconds(), "x_of_bound")
}
