package postgres_test

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"hrsync/store"
)

// benchOrdersCount is how many orders BenchmarkOrdersIngest writes
// (3 line items each): HRSYNC_BENCH_ORDERS, default 10,000. `make bench`
// with HRSYNC_BENCH_ORDERS=100000 is the size (docs/benchmarks.md).
func benchOrdersCount(b *testing.B) int {
	b.Helper()
	v := os.Getenv("HRSYNC_BENCH_ORDERS")
	if v == "" {
		return 10_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("HRSYNC_BENCH_ORDERS=%q: want a positive number", v)
	}
	return n
}

func benchOrders(n, people int) []store.OrderRow {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]store.OrderRow, n)
	for i := range out {
		o := store.OrderRow{OrderID: fmt.Sprintf("ord-%08d", i), CollectionID: "coll-1", OrderNumber: strconv.Itoa(100000 + i),
			ExternalID: fmt.Sprintf("b%07d", i%people), PlacedAt: base.Add(time.Duration(i) * time.Minute)}
		for k := range 3 {
			o.Lines = append(o.Lines, store.LineItemRow{
				LineItemID: fmt.Sprintf("li-%08d-%d", i, k), ProductID: fmt.Sprintf("prod-%03d", (i+k)%50), VariantID: "var-1",
				Title: "Classic Notebook", ProductTitle: "Classic Notebook", VariantTitle: "Default", Quantity: float64(1 + k),
				Price: 12.5, RetailPrice: 15, ImageURL: "https://img.example.test/n.png", ImageAspectRatio: ptrF(1.5),
				Personalizations: `{"work": {"department": "Sales"}}`, Sha: "sha-1",
			})
		}
		out[i] = o
	}
	return out
}

// plainCopy is the baseline: a plain COPY of the same rows into new empty
// tables with the same columns and no keys, in one transaction, on a plain
// database/sql handle. It returns how long the COPY and its commit took,
// then drops the tables.
func plainCopy(b *testing.B, db *sql.DB, orders []store.OrderRow, suffix string) time.Duration {
	b.Helper()
	for _, q := range []string{
		"CREATE TABLE base_orders_" + suffix + " (LIKE orders INCLUDING DEFAULTS)",
		"CREATE TABLE base_lines_" + suffix + " (LIKE order_line_items INCLUDING DEFAULTS)",
	} {
		if _, err := db.ExecContext(ctx(b), q); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	tx, err := db.BeginTx(ctx(b), nil)
	must(b, err)
	now := time.Now().UTC()
	copyRows(b, tx, "base_orders_"+suffix, []string{"tenant", "order_id", "collection_id", "order_number",
		"external_id", "placed_at", "placed_day", "placed_month", "first_seen_at", "updated_at"}, func(emit func(...any)) {
		for _, o := range orders {
			emit("bench", o.OrderID, o.CollectionID, o.OrderNumber, o.ExternalID, o.PlacedAt,
				o.PlacedAt.Format(time.DateOnly), o.PlacedAt.Format("2006-01"), now, now)
		}
	})
	copyRows(b, tx, "base_lines_"+suffix, []string{"tenant", "order_id", "line_item_id", "product_id", "variant_id",
		"title", "product_title", "variant_title", "quantity", "price", "retail_price", "image_url", "image_aspect_ratio",
		"personalizations", "sha", "first_seen_at", "updated_at"}, func(emit func(...any)) {
		for _, o := range orders {
			for _, l := range o.Lines {
				emit("bench", o.OrderID, l.LineItemID, l.ProductID, l.VariantID, l.Title, l.ProductTitle,
					l.VariantTitle, l.Quantity, l.Price, l.RetailPrice, l.ImageURL, *l.ImageAspectRatio, l.Personalizations, l.Sha, now, now)
			}
		}
	})
	must(b, tx.Commit())
	took := time.Since(start)
	for _, q := range []string{"DROP TABLE base_orders_" + suffix, "DROP TABLE base_lines_" + suffix} {
		if _, err := db.ExecContext(ctx(b), q); err != nil {
			b.Fatal(err)
		}
	}
	return took
}

// copyRows streams rows into table with lib/pq's COPY FROM STDIN.
func copyRows(b *testing.B, tx *sql.Tx, table string, cols []string, rows func(emit func(...any))) {
	b.Helper()
	st, err := tx.PrepareContext(ctx(b), "COPY "+table+" ("+strings.Join(cols, ", ")+") FROM STDIN")
	must(b, err)
	defer func() { _ = st.Close() }()
	rows(func(v ...any) {
		if _, err := st.ExecContext(ctx(b), v...); err != nil {
			b.Fatalf("copy %s: %v", table, err)
		}
	})
	if _, err := st.ExecContext(ctx(b)); err != nil {
		b.Fatalf("copy %s: %v", table, err)
	}
}

// BenchmarkOrdersIngest writes N orders with 3N line items into PostgreSQL
// with UpsertOrders, each iteration into a new tenant: the orders are new,
// so they and their lines are copied straight into the keyed, indexed
// tables (the people they name checked once per batch). Its baseline is a
// plain COPY of the same rows into new empty tables with the same columns
// and no keys, indexes or foreign keys, on the same database from the same
// process. Every iteration measures both, in turns (the COPY first in odd
// iterations, second in even ones), so that both see the same load on a
// shared machine; run it with -benchtime 3x or more. It reports rows/s of
// each and x_vs_copy, the ratio of the summed times (1 is as fast as the
// plain COPY; the target is at least 0.5).
//
// unchanged lists the same rows again for a tenant that holds them: they
// are staged and compared set-wise, and nothing is written; its x_vs_copy is
// against a plain COPY measured the same way.
func BenchmarkOrdersIngest(b *testing.B) {
	n := benchOrdersCount(b)
	const people = 1000
	bk := postgresBackend(b)
	s := bk.open(b)
	raw := bk.raw(b)
	orders := benchOrders(n, people)
	rowsPer := float64(n * 4)
	peopleRows := make([]store.PersonRow, people)
	for i := range peopleRows {
		peopleRows[i] = person(fmt.Sprintf("b%07d", i), i)
	}
	copies := 0
	baseline := func(b *testing.B) time.Duration {
		b.Helper()
		copies++
		return plainCopy(b, raw, orders, strconv.Itoa(copies))
	}
	report := func(b *testing.B, took, base time.Duration, runs int) {
		b.Helper()
		per, basePer := took/time.Duration(runs), base/time.Duration(runs)
		b.ReportMetric(rowsPer/per.Seconds(), "rows/s")
		b.ReportMetric(rowsPer/basePer.Seconds(), "copy_rows/s")
		b.ReportMetric(base.Seconds()/took.Seconds(), "x_vs_copy")
	}

	b.Run("insert", func(b *testing.B) {
		i := 0
		var took, base time.Duration
		for b.Loop() {
			i++
			tenant := fmt.Sprintf("ingest-%d", i)
			b.StopTimer()
			must(b, s.SavePeople(ctx(b), tenant, peopleRows))
			if i%2 == 1 {
				base += baseline(b)
			}
			b.StartTimer()
			start := time.Now()
			res, err := s.UpsertOrders(ctx(b), tenant, orders)
			took += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			if res.Orders != n || res.LineItems != 3*n {
				b.Fatalf("written %+v", res)
			}
			if i%2 == 0 {
				b.StopTimer()
				base += baseline(b)
				b.StartTimer()
			}
		}
		report(b, took, base, i)
	})

	b.Run("unchanged", func(b *testing.B) {
		must(b, s.SavePeople(ctx(b), "again", peopleRows))
		_, err := s.UpsertOrders(ctx(b), "again", orders)
		must(b, err)
		i := 0
		var took, base time.Duration
		for b.Loop() {
			i++
			if i%2 == 1 {
				b.StopTimer()
				base += baseline(b)
				b.StartTimer()
			}
			start := time.Now()
			res, err := s.UpsertOrders(ctx(b), "again", orders)
			took += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			if res.Orders != 0 || res.LineItems != 0 {
				b.Fatalf("unchanged rows written: %+v", res)
			}
			if i%2 == 0 {
				b.StopTimer()
				base += baseline(b)
				b.StartTimer()
			}
		}
		report(b, took, base, i)
	})
}
