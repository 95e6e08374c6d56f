package people

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// Plan is the difference between one export and hrsync's state, and what
// applying it would do. It is built without any API call or state change.
type Plan struct {
	Tenant string        `json:"tenant"`
	Source string        `json:"source"`
	Stats  sources.Stats `json:"stats"`

	// Create lists the people to create on the platform: new ones, and
	// known ones whose creation was certainly not applied before.
	Create People `json:"-"`
	// Changed lists known people whose fields changed (saved in state; the
	// platform has no update call).
	Changed []Change `json:"changed"`
	// Returned lists people who had departed and are in the export again.
	Returned []string `json:"returned"`
	// Departed lists active people the export no longer has.
	Departed []string `json:"departed"`
	// Unchanged counts the people the export has exactly as state has them.
	Unchanged int `json:"unchanged"`
	// Held lists known people not yet confirmed on the platform whose
	// grant's outcome is unknown: they wait for an operator.
	Held []string `json:"held"`
	// Rejections are the rows the export could not use, with the plan's
	// own rejections (an e-mail that belongs to another person).
	Rejections []model.Rejection `json:"rejections"`
	// The createPeople calls applying the plan would make are derived from
	// Create when asked for (CallCount, Call), never held: a first import
	// would hold every externalId a second time. The JSON lists them as
	// "calls", here.
	// Trips are the safeguards the plan trips; any trip stops the run.
	Trips []Trip `json:"safeguards"`

	// ActiveBefore is how many active people state had.
	ActiveBefore int `json:"activeBefore"`
	// LastGoodRows is the row count of the last good import (0: none).
	LastGoodRows int `json:"lastGoodRows"`
	// StateFrom says how the state was read: "snapshot" (the index a run
	// saved, still current) or "scan" (every person read from the store).
	StateFrom string `json:"stateFrom"`

	// batching is how Create is cut into calls and what each person is
	// granted (the job's options when the plan was built).
	batching batching

	changedRows  People
	returnedRows People
	heldRows     People
	// unchangedSample names the first reports.MaxListed people counted in
	// Unchanged, with their lines, for the report's "already there".
	unchangedSample []lineID
	// snapshotErr says why a stored snapshot could not be used, when one
	// could not and the state was scanned.
	snapshotErr error
	// scanned is the state the plan scanned (nil when it read the
	// snapshot): the run saves it as the snapshot when the people have not
	// changed since, instead of scanning them again.
	scanned *stateIndex
	// resends names the people of Create that state already knows: their
	// creation was certainly not applied, or an operator released it.
	resends map[string]bool
}

// resendsOnly narrows the plan of a file already processed to the people of
// it whose creation still waits (an operator released their grant): an old
// file must not undo later changes and departures.
func (p *Plan) resendsOnly() {
	p.Create.Filter(func(person model.Person, _ sources.Hashes) bool { return p.resends[person.ExternalID] })
	p.Changed, p.changedRows = nil, People{}
	p.Returned, p.returnedRows = nil, People{}
	p.Departed = nil
	p.Trips = nil
}

// ChangedPeople returns the export's rows of the people in Changed, in the
// same order (for a listing that names them). The list belongs to the plan:
// read it, never change it.
func (p *Plan) ChangedPeople() *People { return &p.changedRows }

// ReturnedPeople returns the export's rows of the people in Returned, in
// the same order. The list belongs to the plan: read it, never change it.
func (p *Plan) ReturnedPeople() *People { return &p.returnedRows }

// NewPerson is, in a plan's JSON, one person the run would create and
// what the run grants them; the text plan lists the same people.
type NewPerson struct {
	ExternalID string  `json:"externalId"`
	Grant      float64 `json:"grant"`
}

// MarshalJSON encodes the plan with its tags, its calls ("calls") and the
// people it would create ("new"), every list that is empty as [] rather
// than null. It holds the whole document: WriteJSON streams it.
func (p *Plan) MarshalJSON() ([]byte, error) {
	var indented bytes.Buffer
	if err := p.WriteJSON(&indented, "", "\t"); err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, indented.Bytes()); err != nil {
		return nil, fmt.Errorf("compact plan: %w", err)
	}
	return compact.Bytes(), nil
}

// orEmpty returns s, or an empty slice when s is nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Change is one known person whose fields changed.
type Change struct {
	ExternalID   string `json:"externalId"`
	EmailChanged bool   `json:"emailChanged"`
}

// PlannedCall is one createPeople call of a plan.
type PlannedCall struct {
	Operation   string   `json:"operation"`
	ExternalIDs []string `json:"externalIds"`
	// Grants is what the call would grant, per person, in export order.
	Grants []float64 `json:"grants"`
	// Total is the sum of the grants.
	Total float64 `json:"total"`
}

// Trip is one safeguard the plan trips.
type Trip struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Message   string  `json:"message"`
}

// Summary counts the plan's outcomes per kind.
func (p *Plan) Summary() map[string]int {
	return map[string]int{
		"rows":      p.Stats.Rows,
		"accepted":  p.Stats.Accepted,
		"rejected":  p.Stats.Rejected,
		"new":       p.Create.Len(),
		"changed":   len(p.Changed),
		"returned":  len(p.Returned),
		"departed":  len(p.Departed),
		"unchanged": p.Unchanged,
		"held":      len(p.Held),
		"calls":     p.CallCount(),
	}
}

// hashes returns the person's key and field hashes, for a person whose
// reader did not compute them (a source that hands its rows over without
// sources.Run; the new people the sender turns into state rows).
func hashes(p *model.Person) sources.Hashes {
	return sources.Hashes{
		ID:     sources.KeyHash(p.ExternalID),
		Email:  sources.KeyHash(p.Email),
		Fields: sources.Fingerprint(*p),
	}
}

// BuildPlan diffs one export against state. It reads state and the export,
// and changes nothing.
//
// The state is loaded first (from its snapshot when it is current), then
// the export is read in one pass (sources.Handler). A row that state has
// exactly as the export does, the common case, is counted as unchanged on
// the spot, remembering only its line and state entry in case a later row
// turns out to repeat its keys; every other accepted row is kept and
// sorted into the plan after the read, when the duplicates are known.
// The departed are the active people of state no row marked as seen.
func (j *Job) BuildPlan(ctx context.Context, export sources.Source) (*Plan, error) {
	return j.buildPlan(ctx, export, false)
}

// buildPlan is BuildPlan; keepScan keeps in the plan the state it scanned,
// if it scanned (Plan.scanned), for the run to save as the snapshot.
func (j *Job) buildPlan(ctx context.Context, export sources.Source, keepScan bool) (*Plan, error) {
	tenant := j.opts.Tenant
	plan := &Plan{Tenant: tenant, Source: export.Name()}

	// Grants that block a resend: pending (interrupted) or unknown outcome.
	blocked, err := j.blockedPeople(ctx)
	if err != nil {
		return nil, err
	}
	state, err := loadState(ctx, j.store, tenant)
	if err != nil {
		return nil, err
	}

	pending, retracted, err := j.readExport(ctx, export, plan, state)
	if err != nil {
		return nil, err
	}
	// The rows to create stay where they are in pending, which becomes
	// plan.Create (moved down in place: a first import lists everyone
	// here, and need not hold them twice).
	if err := j.sortPending(ctx, plan, state, blocked, &pending, retracted); err != nil {
		return nil, err
	}
	plan.Create = pending
	plan.ActiveBefore = state.active
	plan.StateFrom, plan.snapshotErr = state.from, state.snapshotErr
	if keepScan && state.from == stateFromScan {
		plan.scanned = state
	}
	if plan.Stats.Accepted > 0 && !plan.Stats.Corrections {
		// An export with no accepted row (a header alone, every row
		// rejected, an empty query) says nothing about who left: it never
		// departs anyone; nor does a rejects report dropped again, which
		// lists only the rows it corrects.
		plan.Departed = state.departed()
	}

	rows, ok, err := j.store.LastGoodImport(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("read last good import: %w", err)
	}
	if ok {
		plan.LastGoodRows = rows
	}
	plan.batching = j.batching()
	plan.Trips = j.opts.Safeguards.check(plan)
	slices.SortStableFunc(plan.Rejections, func(a, b model.Rejection) int { return cmp.Compare(a.Line, b.Line) })
	return plan, nil
}

// readExport reads the export in one pass into the plan: its rejections,
// its stats, and its unchanged rows, counted and marked seen in state. It
// returns the other accepted rows, in line order, and the lines of the rows
// the read took back (sources.Handler.Retract).
func (j *Job) readExport(ctx context.Context, export sources.Source, plan *Plan, state *stateIndex) (
	pending People, retracted map[int]bool, err error) {
	retracted = map[int]bool{}
	keys := newStateKeys(state)
	accept := func(p *model.Person, h sources.Hashes) error {
		// The fingerprint hashes the externalId too: equal hashes
		// confirm the entry (findHash). Any other row is sorted
		// after the read, with the externalId compared.
		if i, same := keys.entry(p.Line, h.ID, h.Fields); same && !state.marks.seen(i) {
			state.marks.set(i, markSeen) // its idLine is this row's: the read marked it first
			plan.noteUnchanged(p)
			return nil
		}
		pending.Add(*p, h)
		return nil
	}
	stats, err := export.Read(ctx, sources.Handler{
		Keys:         keys,
		AcceptRow:    accept,
		AcceptHashed: func(p model.Person, h sources.Hashes) error { return accept(&p, h) },
		Accept:       func(p model.Person) error { return accept(&p, hashes(&p)) },
		Reject: func(r model.Rejection) error {
			plan.Rejections = append(plan.Rejections, r)
			return nil
		},
		Retract: func(line int) error {
			retracted[line] = true
			return nil
		},
	})
	if err != nil {
		return People{}, nil, fmt.Errorf("read export %s: %w", export.Name(), err)
	}
	if len(retracted) > 0 {
		// An unchanged row taken back is the first with its externalId:
		// the row of its entry's idLine.
		marks := &state.marks
		for i := range state.people {
			if marks.seen(i) && retracted[marks.idLine(i)] {
				marks.clear(i, markSeen)
				plan.Unchanged--
			}
		}
		plan.unchangedSample = slices.DeleteFunc(plan.unchangedSample, func(u lineID) bool { return retracted[u.line] })
	}
	plan.Stats = stats
	return pending, retracted, nil
}

// sortPending sorts the rows pending after the read (less those taken
// back) into the plan with diffRow, and keeps in pending the rows to
// create.
func (j *Job) sortPending(ctx context.Context, plan *Plan, state *stateIndex, blocked map[string]bool, pending *People,
	retracted map[int]bool) error {
	// The externalId hashes of the new people, in line order: checked for
	// a repeat once sorted (8 bytes a person, where a set of them held a
	// first import's million keys a second time).
	var newIDs []uint64
	var diffErr error
	pending.Filter(func(p model.Person, h sources.Hashes) bool {
		if diffErr != nil || retracted[p.Line] {
			return false
		}
		create, err := j.diffRow(ctx, plan, state, &newIDs, blocked, p, h)
		diffErr = err
		return create && err == nil
	})
	// A repeat comes before the row that failed, if one did: the rows
	// after it were not sorted.
	if err := repeatedNewID(plan.Source, state, pending, newIDs); err != nil {
		return err
	}
	return diffErr
}

// repeatedNewID returns the error of the first new person (in line order)
// whose externalId hash an earlier new person has, if any: the read lets
// no externalId through twice, so it cannot happen. newIDs are the hashes
// of the new people of the list, in order; the list holds them and the
// known people to create again.
func repeatedNewID(source string, state *stateIndex, kept *People, newIDs []uint64) error {
	sorted := sortedHashes(newIDs)
	repeated := map[uint64]bool{}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			repeated[sorted[i]] = true
		}
	}
	if len(repeated) == 0 {
		return nil
	}
	seen := map[uint64]bool{}
	for i := range kept.Len() {
		p, h := kept.hashedAt(i)
		if !repeated[h.ID] || state.lookupKey(h.ID, p.ExternalID) != nil {
			continue
		}
		if seen[h.ID] {
			return fmt.Errorf("%s:%d: externalId %s appears twice after validation", source, p.Line, p.ExternalID)
		}
		seen[h.ID] = true
	}
	return nil
}

// sortedHashes returns the hashes sorted, with sortedByHash: a first
// import's million took 68 ms with slices.Sort, on one goroutine.
func sortedHashes(hashes []uint64) []uint64 {
	sources := rangeSources(len(hashes), func(lo, hi int, yield func(*uint64)) {
		for k := lo; k < hi; k++ {
			yield(&hashes[k])
		}
	})
	return sortedByHash(len(hashes), sources, func(h *uint64) uint64 { return *h })
}

// diffRow sorts one accepted row of the export into the plan; create says
// it is one to create, which the caller adds to plan.Create. The hash of a
// new person's externalId is added to newIDs.
func (j *Job) diffRow(ctx context.Context, plan *Plan, state *stateIndex, newIDs *[]uint64,
	blocked map[string]bool, p model.Person, h sources.Hashes) (create bool, err error) {
	id := h.ID
	at := state.lookupKeyAt(id, p.ExternalID)
	if at < 0 {
		if state.emailTaken(h.Email) {
			plan.Rejections = append(plan.Rejections, model.Rejection{
				Source: plan.Source, Line: p.Line, Field: "email",
				Reason: "e-mail already belongs to another person in hrsync's state; an e-mail change must keep the externalId",
			})
			plan.Stats.Rejected++
			return false, nil
		}
		*newIDs = append(*newIDs, id)
		return true, nil
	}
	if state.marks.seen(at) {
		return false, fmt.Errorf("%s:%d: externalId %s appears twice after validation", plan.Source, p.Line, p.ExternalID)
	}
	state.marks.set(at, markSeen)
	k := &state.people[at]
	if !k.has(flagCreated) && blocked[p.ExternalID] {
		plan.Held = append(plan.Held, p.ExternalID)
		plan.heldRows.Add(p, h)
		return false, nil
	}
	if !k.has(flagCreated) {
		// Not confirmed by a platform answer; but an operator may have
		// confirmed (or voided) the grant: then it must not be sent
		// again, and the person is known like any other.
		settled, err := j.grantSettled(ctx, p.ExternalID)
		if err != nil {
			return false, err
		}
		if !settled {
			if plan.resends == nil {
				plan.resends = map[string]bool{}
			}
			plan.resends[p.ExternalID] = true
			return true, nil
		}
	}
	switch {
	case k.has(flagDeparted):
		plan.Returned = append(plan.Returned, p.ExternalID)
		plan.returnedRows.Add(p, h)
	case h.Fields != k.fingerprint:
		plan.Changed = append(plan.Changed, Change{ExternalID: p.ExternalID, EmailChanged: k.email != h.Email})
		plan.changedRows.Add(p, h)
	default:
		plan.noteUnchanged(&p)
	}
	return false, nil
}

// blockedPeople lists the people whose grants wait for an operator.
func (j *Job) blockedPeople(ctx context.Context) (map[string]bool, error) {
	grants, err := j.store.ListGrants(ctx, store.GrantFilter{
		Tenant: j.opts.Tenant,
		States: []model.GrantState{model.GrantPending, model.GrantUnknown},
	})
	if err != nil {
		return nil, fmt.Errorf("list held grants: %w", err)
	}
	blocked := make(map[string]bool, len(grants))
	for _, g := range grants {
		blocked[g.ExternalID] = true
	}
	return blocked, nil
}

// grantSettled tells whether the person's initial grant is applied or
// voided in the ledger, so that it must never be sent again. A person whose
// creation the platform confirmed has it applied; this finds the ones an
// operator confirmed or voided, and the ones whose success answer could not
// be read.
func (j *Job) grantSettled(ctx context.Context, externalID string) (bool, error) {
	g, err := j.store.Grant(ctx, model.GrantKey(j.opts.Tenant, externalID, j.opts.GrantReason, "1"))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read grant of %s: %w", externalID, err)
	}
	return g.State == model.GrantApplied || g.State == model.GrantVoided, nil
}

// grantFor is what a new person is granted: the export's addBalance or the
// configured default, plus the request-level amount the platform adds.
func (j *Job) grantFor(p model.Person) (addBalance, total float64) {
	addBalance = j.opts.DefaultBalance
	if p.AddBalance != nil {
		addBalance = *p.AddBalance
	}
	return addBalance, addBalance + j.opts.Amount
}

// Safeguards stop a run before any call when its export looks wrong.
type Safeguards struct {
	// MaxDepartedRatio is the largest share of active people that may
	// depart in one run.
	MaxDepartedRatio float64
	// MinRowsRatio is the smallest size of an export relative to the last
	// good import.
	MinRowsRatio float64
	// MaxRejectedRatio is the largest share of rows that may be rejected.
	MaxRejectedRatio float64
	// MinPopulation is the population from which the safeguards apply.
	MinPopulation int
}

// DefaultSafeguards are the thresholds of DESIGN.md.
func DefaultSafeguards() Safeguards {
	return Safeguards{MaxDepartedRatio: 0.20, MinRowsRatio: 0.80, MaxRejectedRatio: 0.10, MinPopulation: 50}
}

// SmallPopulationDepartedRatio is the departure limit below MinPopulation:
// a run that would mark more than half of a small population departed still
// stops.
const SmallPopulationDepartedRatio = 0.5

func (s Safeguards) check(p *Plan) []Trip {
	if p.Stats.Corrections {
		// A rejects report dropped again lists the rows it corrects, and
		// departs nobody: its size and its rejected rows say nothing of
		// the export it came from, and its own rejected rows are reported
		// again.
		return nil
	}
	var trips []Trip
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }
	if p.Stats.Accepted == 0 && p.ActiveBefore > 0 {
		trips = append(trips, Trip{Name: "noAcceptedRow", Value: 0, Threshold: 1,
			Message: fmt.Sprintf("the export has no accepted row (%d rows read, %d rejected) against %d active people; nobody is marked departed by such an export",
				p.Stats.Rows, p.Stats.Rejected, p.ActiveBefore)})
	}
	if p.ActiveBefore > 0 {
		limit, why := s.MaxDepartedRatio, ""
		if p.ActiveBefore < s.MinPopulation {
			limit, why = SmallPopulationDepartedRatio, fmt.Sprintf(" below minPopulation (%d)", s.MinPopulation)
		}
		ratio := float64(len(p.Departed)) / float64(p.ActiveBefore)
		if ratio > limit {
			trips = append(trips, Trip{Name: "maxDepartedRatio", Value: ratio, Threshold: limit,
				Message: fmt.Sprintf("%d of %d active people (%s) would be marked departed; the limit%s is %s",
					len(p.Departed), p.ActiveBefore, pct(ratio), why, pct(limit))})
		}
	}
	if p.LastGoodRows >= s.MinPopulation && p.LastGoodRows > 0 {
		ratio := float64(p.Stats.Rows) / float64(p.LastGoodRows)
		if ratio < s.MinRowsRatio {
			trips = append(trips, Trip{Name: "minRowsRatio", Value: ratio, Threshold: s.MinRowsRatio,
				Message: fmt.Sprintf("the export has %d rows, %s of the last good import's %d; the minimum is %s (a truncated file?)",
					p.Stats.Rows, pct(ratio), p.LastGoodRows, pct(s.MinRowsRatio))})
		}
	}
	population := max(p.Stats.Rows, p.ActiveBefore)
	if population >= s.MinPopulation && p.Stats.Rows > 0 {
		ratio := float64(p.Stats.Rejected) / float64(p.Stats.Rows)
		if ratio > s.MaxRejectedRatio && !math.IsNaN(ratio) {
			trips = append(trips, Trip{Name: "maxRejectedRatio", Value: ratio, Threshold: s.MaxRejectedRatio,
				Message: fmt.Sprintf("%d of %d rows (%s) were rejected; the limit is %s",
					p.Stats.Rejected, p.Stats.Rows, pct(ratio), pct(s.MaxRejectedRatio))})
		}
	}
	return trips
}
