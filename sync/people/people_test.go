package people_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hrsync/apiclient"
	"hrsync/emulator"
	"hrsync/internal/emutest"
	"hrsync/model"
	"hrsync/sources"
	"hrsync/sources/csvsrc"
	"hrsync/store"
	"hrsync/sync/people"
	"hrsync/sync/sender"
)

// env is a people sync wired to a real SQLite store and the emulator over loopback.
type env struct {
	t      *testing.T
	st     *store.Store
	emu    *emulator.Emulator
	client *apiclient.Client
	dir    string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(t.Context(), "sqlite:"+filepath.Join(dir, "state.db"), store.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	emu, client := emutest.Start(t)
	return &env{t: t, st: st, emu: emu, client: client, dir: dir}
}

func (e *env) job(mutate func(*people.Options)) *people.Job {
	e.t.Helper()
	opts := people.Options{
		Tenant: "acme", CompanyID: emulator.DatasetCompanyID, CollectionID: emulator.PlainCollectionID,
		BatchSize: 3, Concurrency: 2, DefaultBalance: 10, Safeguards: people.DefaultSafeguards(),
	}
	if mutate != nil {
		mutate(&opts)
	}
	j, err := people.New(opts, e.st, sender.NewJournal(e.st), e.client, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// person is one row of a generated export.
type person struct{ id, email, first, last, dept, start, balance string }

func genPeople(n int) []person {
	out := make([]person, n)
	for i := range out {
		out[i] = person{
			id: fmt.Sprintf("%06d", i+1), email: fmt.Sprintf("p%d@example.com", i+1),
			first: "First", last: fmt.Sprintf("Last%d", i+1), dept: "Eng", start: "2026-11-01", balance: "",
		}
	}
	return out
}

// file is a CSV export on disk, as the drop folder would hand it over.
type file struct {
	csvsrc.File
	sha      string
	size     int64
	archived []string
	// reports are the reports of the last archive, by suffix.
	reports map[string][]byte
}

func (f *file) SHA256() string { return f.sha }
func (f *file) Size() int64    { return f.size }

// Archive records the outcome and the reports, and answers where a drop
// folder would have put the file.
func (f *file) Archive(processed bool, render sources.RenderReports) (string, error) {
	dir := map[bool]string{true: "processed", false: "failed"}[processed]
	dest := dir + "/" + filepath.Base(f.Path)
	files, err := render(dest)
	if err != nil {
		return "", err
	}
	f.reports = map[string][]byte{}
	for _, r := range files {
		if f.reports[r.Suffix], err = r.Bytes(); err != nil {
			return "", err
		}
	}
	f.archived = append(f.archived, dir)
	return dest, nil
}

// Rows reads the rows of the file back, for the rejects report.
func (f *file) Rows(ctx context.Context, lines map[int]bool) (csvsrc.Records, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return csvsrc.Records{}, err
	}
	defer fh.Close()
	return csvsrc.Rows(ctx, f.Name(), fh, f.Options, lines)
}

func (e *env) export(name string, rows []person) *file {
	e.t.Helper()
	return writeExport(e.t, e.dir, name, rows)
}

// writeExport writes rows as the CSV export dir/name.
func writeExport(t testing.TB, dir, name string, rows []person) *file {
	t.Helper()
	var b strings.Builder
	b.WriteString("externalId,email,firstName,lastName,department,startDate,addBalance\n")
	for _, p := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n", p.id, p.email, p.first, p.last, p.dept, p.start, p.balance)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return &file{File: csvsrc.File{Path: path, Options: csvOptions()}, sha: hex.EncodeToString(sum[:]), size: int64(b.Len())}
}

func csvOptions() sources.CSVOptions {
	cols := map[string]string{}
	for _, f := range []string{"externalId", "email", "firstName", "lastName", "department", "startDate", "addBalance"} {
		cols[f] = f
	}
	return sources.CSVOptions{Mapping: sources.Mapping{Columns: cols}}
}

func feed(files ...*file) people.Feed {
	return func(context.Context) ([]people.Export, error) {
		out := make([]people.Export, len(files))
		for i, f := range files {
			out[i] = f
		}
		return out, nil
	}
}

// balances returns the emulator's balance per externalId of the company.
func (e *env) balances() map[string]float64 {
	out := map[string]float64{}
	for _, c := range e.emu.State().Companies {
		if c.ID != emulator.DatasetCompanyID {
			continue
		}
		for _, p := range c.People {
			if p.ExternalID != "" {
				out[p.ExternalID] += p.Balance
			}
		}
	}
	return out
}

func (e *env) createCalls() int { return createCalls(e.emu) }

// createCalls counts the createPeople calls the emulator answered.
func createCalls(emu *emulator.Emulator) int {
	n := 0
	for _, r := range emu.Requests() {
		if r.OperationID == "createPeople" {
			n++
		}
	}
	return n
}

func (e *env) grants(states ...model.GrantState) []model.Grant {
	g, err := e.st.ListGrants(e.t.Context(), store.GrantFilter{Tenant: "acme", States: states})
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

func TestCreatesOnceWithBalances(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(7)
	rows[0].balance = "50"
	rows[1].balance = "0"
	before := e.balances()
	f := e.export("a.csv", rows)

	rep, err := e.job(nil).RunOnce(t.Context(), feed(f), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Outcome(); got != model.OutcomeOK {
		t.Fatalf("outcome %s, want ok: %+v", got, rep)
	}
	if calls := e.createCalls(); calls != 3 { // 7 people in batches of 3
		t.Errorf("createPeople calls = %d, want 3", calls)
	}
	bal := e.balances()
	for _, p := range rows {
		want := 10.0
		switch p.id {
		case "000001":
			want = 50
		case "000002":
			want = 0
		}
		if got := bal[p.id] - before[p.id]; got != want {
			t.Errorf("balance of %s = %g, want %g", p.id, got, want)
		}
	}
	totals, err := e.st.GrantTotals(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	for id, amount := range totals {
		if bal[id] != amount {
			t.Errorf("ledger says %s was granted %g, platform holds %g", id, amount, bal[id])
		}
	}
	if len(f.archived) != 1 || f.archived[0] != "processed" {
		t.Errorf("archived %v, want [processed]", f.archived)
	}

	t.Run("rerun of the same content makes no call", func(t *testing.T) {
		again := e.export("b.csv", rows)
		if _, err := e.job(nil).RunOnce(t.Context(), feed(again), people.RunFlags{}); err != nil {
			t.Fatal(err)
		}
		if calls := e.createCalls(); calls != 3 {
			t.Errorf("createPeople calls = %d after rerun, want still 3", calls)
		}
	})

	t.Run("five new hires create exactly five", func(t *testing.T) {
		more := append(genPeople(7), genPeople(12)[7:]...)
		f := e.export("c.csv", more)
		rep, err := e.job(nil).RunOnce(t.Context(), feed(f), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Exports[0].Counts["created"]; got != 5 {
			t.Errorf("created %d, want 5", got)
		}
		if got := e.createCalls(); got != 5 { // 3 before, then 5 people in 2 batches
			t.Errorf("createPeople calls = %d, want 5", got)
		}
	})
}

func TestUnknownOutcomeIsHeldNotResent(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(3)
	// The platform applies the request, then answers 500: the outcome is unknown.
	if _, err := e.emu.AddFault(emulator.Fault{Operation: "createPeople", When: emulator.After, Status: 500, Count: 1}); err != nil {
		t.Fatal(err)
	}
	rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", rows)), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome() != model.OutcomeAttention || rep.HeldGrants != 3 {
		t.Fatalf("outcome %s with %d held, want attention with 3 held", rep.Outcome(), rep.HeldGrants)
	}
	calls := e.createCalls()

	t.Run("a rerun does not resend", func(t *testing.T) {
		rows2 := append(rows, person{id: "000099", email: "n@example.com", first: "N", last: "N", start: "2026-11-01"})
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("b.csv", rows2)), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Exports[0].Counts["held"]; got != 3 {
			t.Errorf("held %d, want 3", got)
		}
		if got := e.createCalls(); got != calls+1 { // only the new person
			t.Errorf("createPeople calls = %d, want %d", got, calls+1)
		}
		if bal := e.balances(); bal["000001"] != 10 {
			t.Errorf("balance of 000001 = %g, want 10 (granted once)", bal["000001"])
		}
	})

	t.Run("the operator confirms and nothing is held", func(t *testing.T) {
		for _, g := range e.grants(model.GrantUnknown) {
			if err := e.st.ConfirmGrant(t.Context(), g.Key, "seen on the platform"); err != nil {
				t.Fatal(err)
			}
		}
		if held := e.grants(model.GrantUnknown, model.GrantPending); len(held) != 0 {
			t.Errorf("%d grants still held", len(held))
		}
	})
}

func TestTrustedIdempotencyKeyResendsHeldBatch(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(2)
	if _, err := e.emu.AddFault(emulator.Fault{Operation: "createPeople", When: emulator.After, Drop: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", rows)), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	held := e.grants(model.GrantUnknown)
	if len(held) != 2 {
		t.Fatalf("%d grants held after a dropped connection, want 2", len(held))
	}
	trusting := e.job(func(o *people.Options) { o.TrustIdempotencyKey = true })
	rows = append(rows, person{id: "000099", email: "n@example.com", first: "N", last: "N", start: "2026-11-01"})
	rep, err := trusting.RunOnce(t.Context(), feed(e.export("b.csv", rows)), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeldGrants != 0 || rep.Exports[0].Counts["resent"] != 2 {
		t.Fatalf("after a trusted resend: %d held, %d resent; want 0 and 2: %+v %+v", rep.HeldGrants, rep.Exports[0].Counts["resent"], rep.Exports[0], rep.Exports[0].Result)
	}
	// The platform replayed the first answer for the same key: one grant each.
	for id, b := range e.balances() {
		if (id == "000001" || id == "000002") && b != 10 {
			t.Errorf("balance of %s = %g, want 10", id, b)
		}
	}
}

func TestNotAppliedIsSentAgain(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(2)
	// 400 before the request takes effect: certainly not applied, not retried by the client.
	if _, err := e.emu.AddFault(emulator.Fault{Operation: "createPeople", When: emulator.Before, Status: 400, Count: 1}); err != nil {
		t.Fatal(err)
	}
	first := e.export("a.csv", rows)
	rep, err := e.job(nil).RunOnce(t.Context(), feed(first), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Exports[0].Counts["notApplied"]; got != 2 {
		t.Fatalf("notApplied %d, want 2", got)
	}
	if len(first.archived) != 0 || rep.Exports[0].ArchivedAs != "" {
		t.Errorf("the export was archived %v (report: %q); it must stay for the next run", first.archived, rep.Exports[0].ArchivedAs)
	}
	rep, err = e.job(nil).RunOnce(t.Context(), feed(e.export("b.csv", rows)), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Exports[0].Counts["created"]; got != 2 {
		t.Fatalf("created %d on the second run, want 2: %+v %+v", got, rep.Exports[0], rep.Exports[0].Result)
	}
	if bal := e.balances(); bal["000001"] != 10 || bal["000002"] != 10 {
		t.Errorf("balances %v, want 10 each", bal)
	}
}

func TestInterruptedIntentIsHeld(t *testing.T) {
	e := newEnv(t)
	// A run that committed its intent and died before the outcome.
	if err := e.st.StartRun(t.Context(), store.Run{ID: "dead-run", Job: model.JobPeople, Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.st.BeginBatch(t.Context(), store.BatchIntent{
		RunID: "dead-run", Tenant: "acme", Job: model.JobPeople, IdempotencyKey: "k1", RequestSHA: "x",
		People: []store.PersonRow{{ExternalID: "000001", Email: "p1@example.com", FirstName: "First", LastName: "Last1"}},
		Grants: []model.Grant{{ExternalID: "000001", Reason: "initial", Occurrence: "1", Amount: 10}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", genPeople(1))), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeldAtStart != 1 || rep.HeldGrants != 1 {
		t.Fatalf("held at start %d, held after %d; want 1 and 1", rep.HeldAtStart, rep.HeldGrants)
	}
	if calls := e.createCalls(); calls != 0 {
		t.Errorf("createPeople calls = %d, want 0: the interrupted grant must not be resent", calls)
	}
	runs, err := e.st.LastRuns(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == "dead-run" && (r.Outcome != model.OutcomeInterrupted || r.FinishedAt.IsZero()) {
			t.Errorf("the interrupted run is %s (finished %v), want interrupted", r.Outcome, r.FinishedAt)
		}
	}
}

func TestSafeguards(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(60)
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", rows)), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	calls := e.createCalls()

	t.Run("truncated file stops before any call", func(t *testing.T) {
		f := e.export("b.csv", append(rows[:40:40], person{id: "900001", email: "x@example.com", first: "X", last: "Y", start: "2026-11-01"}))
		rep, err := e.job(nil).RunOnce(t.Context(), feed(f), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome() != model.OutcomeSafeguard {
			t.Fatalf("outcome %s, want safeguard", rep.Outcome())
		}
		names := map[string]bool{}
		for _, tr := range rep.Exports[0].Safeguards {
			names[tr.Name] = true
		}
		if !names["minRowsRatio"] || !names["maxDepartedRatio"] {
			t.Errorf("trips %v, want minRowsRatio and maxDepartedRatio", names)
		}
		if got := e.createCalls(); got != calls {
			t.Errorf("createPeople calls = %d, want %d (none)", got, calls)
		}
		if len(f.archived) != 1 || f.archived[0] != "failed" {
			t.Errorf("archived %v, want [failed]", f.archived)
		}
		if got := rep.Exports[0].ArchivedAs; got != "failed/b.csv" {
			t.Errorf("the report says the export was archived as %q, want failed/b.csv", got)
		}
		active, _, err := e.st.CountPeople(t.Context(), "acme")
		if err != nil || active != 60 {
			t.Errorf("active people %d (%v), want 60: nobody marked departed", active, err)
		}
		// Nobody was marked departed, and the counts and lists say so.
		x := rep.Exports[0]
		if _, ok := x.Counts["departed"]; ok || x.Counts["wouldDepart"] != 20 || x.People == nil || len(x.People.Left) != 20 ||
			x.People.Added.Len() != 1 || x.People.AlreadyThereCount != 40 {
			t.Errorf("a stop's counts %v; want wouldDepart 20 and no departed, and 20 who would have left, 1 added, 40 already there", x.Counts)
		}
	})

	t.Run("override goes on", func(t *testing.T) {
		f := e.export("c.csv", rows[:40])
		rep, err := e.job(nil).RunOnce(t.Context(), feed(f), people.RunFlags{OverrideSafeguards: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome() != model.OutcomeOK || rep.Exports[0].Counts["departed"] != 20 {
			t.Fatalf("outcome %s, departed %d; want ok and 20", rep.Outcome(), rep.Exports[0].Counts["departed"])
		}
	})
}

// TestSafeguardsSmallPopulation checks the departure safeguard below
// minPopulation: more than half of a small population departing still
// stops the run, half does not, and an export with no accepted row (a
// header alone) departs nobody, even with the override.
func TestSafeguardsSmallPopulation(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(10)
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", rows)), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	active := func(t *testing.T) int {
		t.Helper()
		n, _, err := e.st.CountPeople(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Run("six of ten departing stops the run", func(t *testing.T) {
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("b.csv", rows[:4])), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome() != model.OutcomeSafeguard || len(rep.Exports[0].Safeguards) == 0 ||
			rep.Exports[0].Safeguards[0].Name != "maxDepartedRatio" || rep.Exports[0].Safeguards[0].Threshold != people.SmallPopulationDepartedRatio {
			t.Fatalf("outcome %s, trips %+v; want a maxDepartedRatio stop at 50%%", rep.Outcome(), rep.Exports[0].Safeguards)
		}
		if n := active(t); n != 10 {
			t.Errorf("%d active people, want 10: nobody departed", n)
		}
	})
	t.Run("a header alone stops the run and departs nobody, even overridden", func(t *testing.T) {
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("c.csv", nil)), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome() != model.OutcomeSafeguard || rep.Exports[0].Safeguards[0].Name != "noAcceptedRow" {
			t.Fatalf("outcome %s, trips %+v; want a noAcceptedRow stop", rep.Outcome(), rep.Exports[0].Safeguards)
		}
		rep, err = e.job(nil).RunOnce(t.Context(), feed(e.export("d.csv", nil)), people.RunFlags{OverrideSafeguards: true})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Exports[0].Counts["departed"] != 0 || active(t) != 10 {
			t.Errorf("departed %d, active %d; want nobody departed", rep.Exports[0].Counts["departed"], active(t))
		}
	})
	t.Run("five of ten departing goes on", func(t *testing.T) {
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("e.csv", rows[:5])), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome() != model.OutcomeOK || rep.Exports[0].Counts["departed"] != 5 || active(t) != 5 {
			t.Errorf("outcome %s, departed %d, active %d; want ok, 5 and 5", rep.Outcome(), rep.Exports[0].Counts["departed"], active(t))
		}
	})
}

func TestChangesAndEmailChange(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(3)
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", rows)), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	calls := e.createCalls()
	changed := append([]person(nil), rows...)
	changed[0].dept = "Sales"
	changed[1].email = "renamed@example.com"
	j := e.job(nil)
	plan, err := j.BuildPlan(t.Context(), e.export("b.csv", changed))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Create.Len() != 0 || len(plan.Changed) != 2 || plan.Unchanged != 1 {
		t.Fatalf("plan: create %d changed %v unchanged %d; want 0, 2, 1", plan.Create.Len(), plan.Changed, plan.Unchanged)
	}
	if !plan.Changed[1].EmailChanged || plan.Changed[0].EmailChanged {
		t.Errorf("email change flags %+v", plan.Changed)
	}

	t.Run("a new person with another's e-mail is rejected", func(t *testing.T) {
		// 000003 leaves the export; a new person takes its e-mail, which state still gives to 000003.
		clash := append(append([]person(nil), rows[:2]...), person{id: "000777", email: rows[2].email, first: "A", last: "B", start: "2026-11-01"})
		plan, err := j.BuildPlan(t.Context(), e.export("c.csv", clash))
		if err != nil {
			t.Fatal(err)
		}
		if plan.Create.Len() != 0 || len(plan.Rejections) != 1 || plan.Rejections[0].Field != "email" || plan.Rejections[0].Line != 4 {
			t.Fatalf("plan: create %d rejections %+v; want 0 and one on line 4, field email", plan.Create.Len(), plan.Rejections)
		}
	})
	if got := e.createCalls(); got != calls {
		t.Errorf("planning made %d calls", got-calls)
	}
}

func TestLockedRunExitsAtOnce(t *testing.T) {
	e := newEnv(t)
	release, err := e.st.TryLock(t.Context(), "people-acme")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = release() }()
	_, err = e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", genPeople(1))), people.RunFlags{})
	if !errors.Is(err, people.ErrLocked) {
		t.Fatalf("err %v, want ErrLocked", err)
	}
}

func TestReleasedGrantIsSentWhenTheSameFileIsDroppedAgain(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(3)
	// A 500 before the request takes effect: the outcome is unknown to hrsync, yet nothing was applied.
	if _, err := e.emu.AddFault(emulator.Fault{Operation: "createPeople", When: emulator.Before, Status: 500, Count: 1}); err != nil {
		t.Fatal(err)
	}
	first := e.export("a.csv", rows[:2])
	if _, err := e.job(nil).RunOnce(t.Context(), feed(first), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	held := e.grants(model.GrantUnknown)
	if len(held) != 2 {
		t.Fatalf("%d grants held, want 2", len(held))
	}
	// A later export adds a person and a change, so that the re-dropped old file has something to undo.
	later := append(append([]person(nil), rows...), person{id: "000050", email: "late@example.com", first: "L", last: "L", start: "2026-11-01"})
	later[2].dept = "Sales"
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("b.csv", later)), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	for _, g := range held {
		if err := e.st.ReleaseGrant(t.Context(), g.Key, "not on the platform"); err != nil {
			t.Fatal(err)
		}
	}
	calls := e.createCalls()

	again := e.export("a-again.csv", rows[:2]) // the same bytes as a.csv
	rep, err := e.job(nil).RunOnce(t.Context(), feed(again), people.RunFlags{})
	if err != nil {
		t.Fatal(err)
	}
	ex := rep.Exports[0]
	if !ex.Duplicate || ex.Counts["created"] != 2 || ex.Counts["departed"] != 0 || ex.Counts["changed"] != 0 {
		t.Fatalf("re-dropped file: duplicate %v, counts %v; want a duplicate that creates 2 and departs or changes nobody", ex.Duplicate, ex.Counts)
	}
	if got := e.createCalls(); got != calls+1 {
		t.Errorf("createPeople calls = %d, want %d", got, calls+1)
	}
	bal := e.balances()
	for _, id := range []string{"000001", "000002", "000003", "000050"} {
		if bal[id] != 10 {
			t.Errorf("balance of %s = %g, want 10", id, bal[id])
		}
	}
	active, departed, err := e.st.CountPeople(t.Context(), "acme")
	if err != nil || active != 4 || departed != 0 {
		t.Errorf("people active %d departed %d (%v), want 4 and 0", active, departed, err)
	}
	if p, ok, err := e.st.Person(t.Context(), "acme", "000003"); err != nil || !ok || p.Department != "Sales" {
		t.Errorf("000003's department %q (%v): the old file must not undo the later change", p.Department, err)
	}

	t.Run("dropped once more, it is a plain duplicate", func(t *testing.T) {
		calls := e.createCalls()
		rep, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a-third.csv", rows[:2])), people.RunFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Exports[0].Duplicate || rep.Exports[0].Counts["duplicate"] != 1 || e.createCalls() != calls {
			t.Errorf("third drop: %+v, %d new calls", rep.Exports[0], e.createCalls()-calls)
		}
	})
}

func TestPlanRejectsDuplicatesOfKnownAndNewKeys(t *testing.T) {
	e := newEnv(t)
	rows := genPeople(60)
	if _, err := e.job(nil).RunOnce(t.Context(), feed(e.export("a.csv", rows)), people.RunFlags{}); err != nil {
		t.Fatal(err)
	}
	next := append([]person(nil), rows...)
	next[5].dept = "Sales" // changed, then repeated below: taken back from the changed
	next = append(next,
		rows[3], // known externalId, unchanged first row (line 5)
		person{id: "000006", email: "x6@example.com", first: "F"}, // known externalId of the changed row (line 7)
		person{id: "N1", email: "n1@example.com", first: "A", last: "B"},
		person{id: "N1", email: "n1b@example.com", first: "A", last: "B"}, // new externalId twice
		person{id: "N2", email: rows[10].email, first: "A", last: "B"},    // known e-mail of an unchanged row (line 12)
	)
	plan, err := e.job(nil).BuildPlan(t.Context(), e.export("b.csv", next))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range plan.Rejections {
		reason, _, _ := strings.Cut(r.Reason, ";")
		got = append(got, fmt.Sprintf("%d %s %s", r.Line, r.Field, reason))
	}
	want := []string{
		"5 externalId duplicate externalId: also on line 62",
		"5 email duplicate e-mail: also on line 62",
		"7 externalId duplicate externalId: also on line 63",
		"12 email duplicate e-mail: also on line 66",
		"62 externalId duplicate externalId: first on line 5",
		"62 email duplicate e-mail: first on line 5",
		"63 externalId duplicate externalId: first on line 7",
		"63 lastName required value is empty",
		"64 externalId duplicate externalId: also on line 65",
		"65 externalId duplicate externalId: first on line 64",
		"66 email duplicate e-mail: first on line 12",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rejections:\n got %q\nwant %q", got, want)
	}
	// 60 known rows, 3 of them rejected: 57 unchanged; the changed one was
	// taken back; nobody new; the 3 rejected known people look departed.
	if plan.Unchanged != 57 || len(plan.Changed) != 0 || plan.Create.Len() != 0 ||
		!slices.Equal(plan.Departed, []string{"000004", "000006", "000011"}) {
		t.Errorf("unchanged %d, changed %v, create %d, departed %v", plan.Unchanged, plan.Changed, plan.Create.Len(), plan.Departed)
	}
	if plan.Stats != (sources.Stats{Rows: 65, Accepted: 57, Rejected: 8}) {
		t.Errorf("stats = %+v", plan.Stats)
	}
}
