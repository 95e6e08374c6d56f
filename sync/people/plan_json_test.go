package people

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"hrsync/model"
	"hrsync/sources"
)

// heldPlan is the plan's JSON as it was encoded before the calls were
// derived and the document streamed: a struct holding every call and every
// new person, in the order of the fields of the plan of that time.
type heldPlan struct {
	Tenant       string            `json:"tenant"`
	Source       string            `json:"source"`
	Stats        sources.Stats     `json:"stats"`
	Changed      []Change          `json:"changed"`
	Returned     []string          `json:"returned"`
	Departed     []string          `json:"departed"`
	Unchanged    int               `json:"unchanged"`
	Held         []string          `json:"held"`
	Rejections   []model.Rejection `json:"rejections"`
	Calls        []PlannedCall     `json:"calls"`
	Trips        []Trip            `json:"safeguards"`
	ActiveBefore int               `json:"activeBefore"`
	LastGoodRows int               `json:"lastGoodRows"`
	StateFrom    string            `json:"stateFrom"`
	New          []NewPerson       `json:"new"`
}

// heldJSON builds heldPlan as the plan of that time did: the calls cut from
// Create at build time (planCalls), the new people's grants read from them.
func heldJSON(p *Plan, j *Job) heldPlan {
	var calls []PlannedCall
	for start := 0; start < p.Create.Len(); start += j.opts.BatchSize {
		end := min(start+j.opts.BatchSize, p.Create.Len())
		c := PlannedCall{Operation: "createPeople"}
		for _, person := range p.Create.Slice(start, end) {
			_, total := j.grantFor(person)
			c.ExternalIDs = append(c.ExternalIDs, person.ExternalID)
			c.Grants = append(c.Grants, total)
			c.Total += total
		}
		calls = append(calls, c)
	}
	h := heldPlan{Tenant: p.Tenant, Source: p.Source, Stats: p.Stats, Changed: orEmpty(p.Changed),
		Returned: orEmpty(p.Returned), Departed: orEmpty(p.Departed), Unchanged: p.Unchanged, Held: orEmpty(p.Held),
		Rejections: orEmpty(p.Rejections), Calls: orEmpty(calls), Trips: orEmpty(p.Trips), ActiveBefore: p.ActiveBefore,
		LastGoodRows: p.LastGoodRows, StateFrom: p.StateFrom, New: []NewPerson{}}
	for _, c := range calls {
		for k, id := range c.ExternalIDs {
			h.New = append(h.New, NewPerson{ExternalID: id, Grant: c.Grants[k]})
		}
	}
	return h
}

// filledPlan returns a plan with every list filled (n new people, some
// with their own addBalance, names that JSON escapes), as job j plans.
func filledPlan(j *Job, n int) *Plan {
	p := &Plan{Tenant: "acme <&>", Source: "export \"2026\".csv", Stats: sources.Stats{Rows: 9, Accepted: 7, Rejected: 2},
		Changed: []Change{{ExternalID: "c1", EmailChanged: true}, {ExternalID: "c2"}}, Returned: []string{"r1"},
		Departed: []string{"d1", "d2", "d<3>"}, Unchanged: 4, Held: []string{"h1"},
		Rejections:   []model.Rejection{{Source: "x.csv", Line: 3, Field: "email", Reason: "bad & \u2028 odd"}},
		Trips:        []Trip{{Name: "maxDepartedRatio", Value: 0.123456789, Threshold: 0.2, Message: "too many <people>"}},
		ActiveBefore: 12, LastGoodRows: 10, StateFrom: "scan", batching: j.batching()}
	for i := range n {
		person := model.Person{Line: i + 2, ExternalID: fmt.Sprintf("E%03d\u00e9<%d>", i, i), Email: fmt.Sprintf("p%d@example.com", i),
			FirstName: "Ann", LastName: "Lee"}
		if i%3 == 1 {
			v := 10.1 * float64(i)
			person.AddBalance = &v
		}
		p.Create.Add(person, hashes(&person))
	}
	return p
}

// TestPlanJSONAsHeld checks that the plan's JSON, whole (MarshalJSON) and
// streamed at any indentation (WriteJSON), is byte for byte what the plan
// holding its calls and new people encoded, on plans with every list
// filled and on empty ones, with calls cut at several batch sizes; at one
// processor and at three, where lists longer than a job of
// jsonstream.Writer.Elems (the many new people, the many calls) are
// encoded in parallel.
func TestPlanJSONAsHeld(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n, batch    int
		amount, def float64
		procs       int
	}{
		{"empty", 0, 3, 0, 25, 1}, {"one call", 2, 3, 0.5, 25, 1}, {"calls cut", 7, 3, 1.25, 25, 1}, {"exact batches", 6, 2, 0, 0.1, 1},
		{"many", 250, 100, 0, 25, 1}, {"many, in parallel", 250, 100, 0, 25, 3}, {"many calls, in parallel", 700, 3, 0.75, 25, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			j := &Job{opts: Options{BatchSize: tc.batch, Amount: tc.amount, DefaultBalance: tc.def}}
			p := filledPlan(j, tc.n)
			want, err := json.Marshal(heldJSON(p, j))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("MarshalJSON:\n got %s\nwant %s", got, want)
			}
			for _, ind := range [][2]string{{"", "  "}, {"    ", "  "}, {"> ", "\t"}} {
				want, err := json.MarshalIndent(heldJSON(p, j), ind[0], ind[1])
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := p.WriteJSON(&got, ind[0], ind[1]); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("WriteJSON(%q, %q):\n got %s\nwant %s", ind[0], ind[1], got.Bytes(), want)
				}
			}
		})
	}
}

// TestPlanJSONFields checks that the plan's JSON names every field of Plan
// that has a JSON name: a field added to Plan must be added to WriteJSON.
func TestPlanJSONFields(t *testing.T) {
	j := &Job{opts: Options{BatchSize: 2}}
	var doc map[string]json.RawMessage
	b, err := json.Marshal(filledPlan(j, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[Plan]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if _, ok := doc[name]; !ok {
			t.Errorf("field %s (%q) is not in the plan's JSON", f.Name, name)
		}
	}
	if len(doc) != 15 {
		t.Errorf("the plan's JSON has %d members, want 15 (its fields, calls and new)", len(doc))
	}
}

// TestRepeatedNewID checks the check that replaced the set of new
// externalIds: the first new person whose externalId hash an earlier one
// has is named, in line order, whatever the order of the hashes.
func TestRepeatedNewID(t *testing.T) {
	state := &stateIndex{}
	state.index()
	var kept People
	var ids []uint64
	for _, id := range []string{"E9", "E1", "E2", "E1", "E9"} {
		p := model.Person{Line: len(ids) + 2, ExternalID: id}
		h := hashes(&p)
		kept.Add(p, h)
		ids = append(ids, h.ID)
	}
	err := repeatedNewID("x.csv", state, &kept, slices.Clone(ids))
	if err == nil || err.Error() != "x.csv:5: externalId E1 appears twice after validation" {
		t.Fatalf("err = %v, want the second E1 (line 5)", err)
	}
	if err := repeatedNewID("x.csv", state, &kept, ids[:3]); err != nil {
		t.Fatalf("no repeat: err = %v", err)
	}
}

// BenchmarkPlanJSON writes the JSON of a plan shaped like the daily plan
// of docs/benchmarks.md scaled down ten times: 1,000 changed, 1,000 new
// (in calls of 100) and 500 departed.
func BenchmarkPlanJSON(b *testing.B) {
	j := &Job{opts: Options{BatchSize: 100, DefaultBalance: 25}}
	p := filledPlan(j, 0)
	p.Changed, p.Departed = nil, nil
	for i := range 1000 {
		person := model.Person{Line: i + 2, ExternalID: fmt.Sprintf("N%08d", i), Email: fmt.Sprintf("n%d@example.com", i)}
		p.Create.Add(person, hashes(&person))
	}
	for i := range 1000 {
		p.Changed = append(p.Changed, Change{ExternalID: fmt.Sprintf("E%08d", i), EmailChanged: i%7 == 0})
	}
	for i := range 500 {
		p.Departed = append(p.Departed, fmt.Sprintf("D%08d", i))
	}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := p.WriteJSON(&out, "  ", "  "); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}

// BenchmarkFirstImportPlanJSON writes the JSON of a first import's plan
// (200,000 new people in calls of 100) to io.Discard, as `hrsync plan -o
// json` streams it, at one processor (the elements encoded in order) and
// at the process's GOMAXPROCS, alternately, each first in half the
// iterations, and reports the second's time as a ratio to the first's
// ("par/seq"). It sets GOMAXPROCS itself: run it without -cpu, whose first
// value a b.Loop benchmark does not get (docs/benchmarks.md).
func BenchmarkFirstImportPlanJSON(b *testing.B) {
	j := &Job{opts: Options{BatchSize: 100, DefaultBalance: 25}}
	p := &Plan{Tenant: "acme", Source: "employees.csv", StateFrom: "scan", batching: j.batching()}
	for i := range 200_000 {
		person := model.Person{Line: i + 2, ExternalID: fmt.Sprintf("E%08d", i), Email: fmt.Sprintf("p%d@example.com", i),
			FirstName: "Ann", LastName: "Lee"}
		if i%3 == 1 {
			v := 10.5 * float64(i%100)
			person.AddBalance = &v
		}
		p.Create.Add(person, hashes(&person))
	}
	procs := runtime.GOMAXPROCS(0)
	write := func(n int) time.Duration {
		runtime.GOMAXPROCS(n)
		start := time.Now()
		if err := p.WriteJSON(io.Discard, "", "  "); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var seq, par time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			seq += write(1)
			par += write(procs)
		} else {
			par += write(procs)
			seq += write(1)
		}
	}
	b.ReportMetric(float64(par)/float64(seq), "par/seq")
	b.ReportMetric(float64(seq.Microseconds())/1e3/float64(b.N), "seq-ms/op")
	b.ReportMetric(float64(par.Microseconds())/1e3/float64(b.N), "par-ms/op")
}
