package drivertest

import (
	"bufio"
	"database/sql"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"hrsync/store"
)

// reportingDoc is the document whose queries the tests run.
const reportingDoc = "../../docs/reporting.md"

// docQuery is one example query of docs/reporting.md.
type docQuery struct {
	num   int
	title string
	sql   string
}

var headingRE = regexp.MustCompile(`^### (\d+)\. (.+)$`)

// docSection returns the lines of the "## " section of the doc whose title
// starts with prefix.
func docSection(t *testing.T, prefix string) []string {
	t.Helper()
	f, err := os.Open(reportingDoc)
	if err != nil {
		t.Fatalf("open %s: %v", reportingDoc, err)
	}
	defer func() { _ = f.Close() }()
	var (
		out []string
		in  bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## "+prefix)
			continue
		}
		if in {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no section %q", reportingDoc, prefix)
	}
	return out
}

// sqlBlocks returns the ```sql blocks of lines, each with the "### n."
// heading before it (0 and "" when none).
func sqlBlocks(lines []string) []docQuery {
	var (
		out   []docQuery
		cur   docQuery
		in    bool
		block []string
	)
	for _, line := range lines {
		switch {
		case in && line == "```":
			cur.sql = strings.Join(block, "\n")
			out = append(out, cur)
			in, block = false, nil
		case in:
			block = append(block, line)
		case line == "```sql":
			in = true
		default:
			if m := headingRE.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				cur = docQuery{num: n, title: m[2]}
			}
		}
	}
	return out
}

// norm renders a value the same way whichever driver returned it: NULL,
// numbers without trailing zeros, days as YYYY-MM-DD, instants as RFC 3339
// UTC, booleans as 1 or 0.
func norm(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return num(x)
	case time.Time:
		return normTime(x)
	case []byte:
		return norm(string(x))
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return num(f)
		}
		for _, l := range []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999", time.DateOnly} {
			if tt, err := time.Parse(l, x); err == nil {
				return normTime(tt)
			}
		}
		return x
	}
	return fmt.Sprint(v)
}

func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64)
}

func normTime(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}

func queryRows(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.QueryContext(ctx(t), q)
	if err != nil {
		t.Fatalf("query: %v\n%s", err, q)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	must(t, err)
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		must(t, rows.Scan(ptrs...))
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = norm(v)
		}
		out = append(out, row)
	}
	must(t, rows.Err())
	return out
}

// seedReporting fills a store with four people, their grants, four orders
// through their polls, and two products. It returns the month of the recent
// order (YYYY-MM).
func seedReporting(t *testing.T, b backend, s *store.Store, raw *sql.DB) string {
	t.Helper()
	day := func(m time.Month, d, h int) time.Time { return time.Date(2025, m, d, h, 0, 0, 0, time.UTC) }
	people := []store.PersonRow{
		{ExternalID: "e1", Email: "e1@example.test", Department: "Engineering", Location: "Lisbon", RemoteID: "u1"},
		{ExternalID: "e2", Email: "e2@example.test", Department: "Sales", Location: "Austin", RemoteID: "u2"},
		{ExternalID: "e3", Email: "e3@example.test", Department: "Engineering", Location: "Austin", RemoteID: "u3"},
		{ExternalID: "e4", Email: "e4@example.test", Department: "Finance", Location: "Lisbon", RemoteID: "u4"},
	}
	must(t, s.SavePeople(ctx(t), "acme", people))
	for i, g := range []struct {
		ext    string
		amount float64
		state  string
		reason string
		month  time.Month
	}{{"e1", 50, "applied", "initial", 1}, {"e2", 25, "applied", "initial", 1}, {"e3", 30, "applied", "initial", 1},
		{"e3", 10, "unknown", "initial", 1}, {"e4", 20, "applied", "initial", 1},
		{"e2", 5, "applied", "birthday", 2}, {"e4", 5, "applied", "birthday", 2}, {"e1", 5, "unknown", "birthday", 3}} {
		q := b.q(`INSERT INTO grants (grant_key, tenant, external_id, reason, occurrence, amount, state, created_at, updated_at)
			VALUES (?, 'acme', ?, ?, ?, ?, ?, ?, ?)`)
		occ := strconv.Itoa(i)
		args := []any{"acme/" + g.ext + "/" + g.reason + "/" + occ, g.ext, g.reason, occ, g.amount, g.state, day(g.month, 3, 0), day(g.month, 3, 0)}
		if _, err := raw.ExecContext(ctx(t), q, args...); err != nil {
			t.Fatalf("seed grant: %v", err)
		}
	}
	line := func(id, product, title string, qty, price float64) store.LineItemRow {
		return store.LineItemRow{LineItemID: id, ProductID: product, ProductTitle: title, Title: title, Quantity: qty, Price: price, RetailPrice: price}
	}
	recent := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Second)
	_, err := s.UpsertOrders(ctx(t), "acme", []store.OrderRow{
		{OrderID: "o1", CollectionID: "c1", ExternalID: "e1", PlacedAt: day(1, 10, 9),
			Lines: []store.LineItemRow{line("l1", "p1", "Notebook", 2, 10), line("l2", "p2", "Hoodie", 1, 30)}},
		{OrderID: "o2", CollectionID: "c1", ExternalID: "e2", PlacedAt: day(1, 20, 9), Lines: []store.LineItemRow{line("l3", "p1", "Notebook", 1, 10)}},
		{OrderID: "o3", CollectionID: "c1", ExternalID: "e3", PlacedAt: day(2, 5, 9), Lines: []store.LineItemRow{line("l4", "p2", "Hoodie", 1, 30)}},
		{OrderID: "o4", CollectionID: "c1", ExternalID: "e1", PlacedAt: recent, Lines: []store.LineItemRow{line("l5", "p1", "Notebook", 1, 10)}},
	})
	must(t, err)
	lo := func(id, status string, parcels ...string) store.LineObservation {
		l := store.LineObservation{LineItemID: id, Status: status}
		for _, p := range parcels {
			l.Shipments = append(l.Shipments, store.Shipment{TrackingNumber: p, TrackingURL: "https://t.example.test/" + p})
			l.TrackingNumber = p
		}
		return l
	}
	apply := func(at time.Time, obs ...store.OrderObservation) {
		t.Helper()
		_, err := s.ApplyOrderStatuses(ctx(t), "acme", obs, at)
		must(t, err)
	}
	apply(day(1, 10, 12), store.OrderObservation{OrderID: "o1", Status: "Placed", Lines: []store.LineObservation{lo("l1", "processing"), lo("l2", "processing")}})
	apply(day(1, 13, 9), store.OrderObservation{OrderID: "o1", Status: "Shipped", Lines: []store.LineObservation{lo("l1", "shipped", "A", "B"), lo("l2", "canceled")}})
	apply(day(1, 21, 9), store.OrderObservation{OrderID: "o2", Status: "Shipped", Lines: []store.LineObservation{lo("l3", "shipped", "C")}})
	apply(day(2, 5, 12), store.OrderObservation{OrderID: "o3", Status: "Placed", Lines: []store.LineObservation{lo("l4", "processing")}})
	apply(recent.Add(24*time.Hour), store.OrderObservation{OrderID: "o4", Status: "Pending", Lines: []store.LineObservation{lo("l5", "processing")}})
	_, err = s.StopPolling(ctx(t), "acme", []string{"o3"}, day(6, 1, 0))
	must(t, err)
	_, err = s.SaveProducts(ctx(t), "acme", []store.ProductRow{
		{ProductID: "p1", CollectionID: "c1", Title: "Notebook", Status: "Active", CreationStatus: "Done", Tags: []string{"paper", "office"}, Raw: `{"id": "p1"}`},
		{ProductID: "p2", CollectionID: "c1", Title: "Hoodie", Status: "Active", CreationStatus: "Done", Tags: []string{"apparel", "office"}, Raw: `{"id": "p2"}`},
	}, day(1, 11, 0))
	must(t, err)
	return recent.Format("2006-01")
}

func testReportingQueries(t *testing.T, d Backend) {
	queries := sqlBlocks(docSection(t, "Example queries"))
	if len(queries) < 10 {
		t.Fatalf("%s has %d example queries, want at least 10", reportingDoc, len(queries))
	}
	eachBackend(t, d, func(t *testing.T, b backend) {
		s := b.open(t)
		raw := b.raw(t)
		recentMonth := seedReporting(t, b, s, raw)
		want := map[int][][]string{
			1:  {{"Engineering", "2025-01", "1"}, {"Sales", "2025-01", "1"}, {"Engineering", "2025-02", "1"}, {"Engineering", recentMonth, "1"}},
			2:  {{"o3", "e3", "Placed", "2025-02-05"}},
			3:  {{"p1", "2", "2"}},
			4:  {{"o1", "e1", "l2", "Hoodie", "2025-01-13T09:00:00Z"}},
			5:  {{"e1", "Engineering", "50", "30"}, {"e2", "Sales", "30", "10"}, {"e3", "Engineering", "30", "30"}, {"e4", "Finance", "25", "0"}},
			6:  {{"o1", "l1", "2"}},
			7:  {{"Shipped", "2"}, {"Pending", "1"}, {"Placed", "1"}},
			8:  {{"p1", "Notebook", "4"}, {"p2", "Hoodie", "1"}},
			9:  {{"o1", "NULL", "Placed", "2025-01-10T12:00:00Z"}, {"o1", "Placed", "Shipped", "2025-01-13T09:00:00Z"}},
			10: {{"Austin", "2", "40"}, {"Lisbon", "2", "30"}},
			11: {{"o3", "e3", "Placed", "2025-02-05"}},
			12: {{"apparel", "1"}, {"office", "2"}, {"paper", "1"}},
			13: {{"e4", "Finance"}},
			14: {{"initial", "2025-01", "applied", "4", "125"}, {"initial", "2025-01", "unknown", "1", "10"},
				{"birthday", "2025-02", "applied", "2", "10"}, {"birthday", "2025-03", "unknown", "1", "5"}},
		}
		seen := map[int]bool{}
		for _, q := range queries {
			t.Run(fmt.Sprintf("%d %s", q.num, q.title), func(t *testing.T) {
				exp, ok := want[q.num]
				if !ok {
					t.Fatalf("no expected rows for query %d: add them to this test", q.num)
				}
				seen[q.num] = true
				got := queryRows(t, raw, q.sql)
				if !slices.EqualFunc(got, exp, slices.Equal[[]string]) {
					t.Fatalf("rows:\n got %q\nwant %q", got, exp)
				}
			})
		}
		for n := range want {
			if !seen[n] {
				t.Errorf("query %d is expected but not in %s", n, reportingDoc)
			}
		}
	})
}

// reportingTables are the tables and views analysts read.
func reportingTables() []string {
	return []string{
		"orders", "order_line_items", "shipments", "order_status_history", "line_item_status_history",
		"products", "product_tags", "orders_watermarks", "analyst_people", "analyst_grants", "order_facts", "line_item_facts",
		"grants_by_rule_month",
	}
}
