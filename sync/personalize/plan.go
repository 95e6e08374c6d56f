package personalize

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"hrsync/model"
	"hrsync/sources"
	"hrsync/store"
)

// Reason says why an item is in a plan.
type Reason string

// The reasons for a call.
const (
	ReasonNew     Reason = "new"     // never personalized for this collection
	ReasonChanged Reason = "changed" // the source fields changed since
	ReasonPending Reason = "pending" // the platform answered Pending: ask again
	ReasonRetry   Reason = "retry"   // a call failed and its wait is over
)

// Item is one personalization a run would make: one person and one
// collection. It names the person by externalId only.
type Item struct {
	ExternalID   string `json:"externalId"`
	CollectionID string `json:"collectionId"`
	Reason       Reason `json:"reason"`

	person      model.Person
	fingerprint uint64
	prev        *store.Personalization
}

// Plan is what a run would do, computed without any call.
type Plan struct {
	Tenant string `json:"tenant"`
	// Source names the last good export read; "" when there is none.
	Source string `json:"source"`
	// InWindow counts the accepted records whose start date is in the window.
	InWindow int `json:"inWindow"`
	// NotSynced counts those the store does not list as active people (not
	// created yet, or departed): they are not personalized.
	NotSynced int `json:"notSynced"`
	// Items are the calls to make, ordered by externalId, then by the
	// configured order of the collections.
	Items []Item `json:"items"`
	// Unchanged counts done personalizations whose fields did not change;
	// Unusable those the platform answered Error for; Failed those left
	// for an operator; Waiting those whose retry is not due yet.
	Unchanged int `json:"unchanged"`
	Unusable  int `json:"unusable"`
	Failed    int `json:"failed"`
	Waiting   int `json:"waiting"`
	// Refused lists the collections skipped because the platform refused
	// them (422) recently.
	Refused []store.RefusedCollection `json:"refused,omitempty"`
}

// Counts are the plan's numbers by name: inWindow, notSynced, planned (and
// plannedNew, plannedChanged, plannedPending, plannedRetry per reason), unchanged, knownUnusable, leftForOperator,
// waiting, refusedCollections.
func (p *Plan) Counts() map[string]int {
	c := map[string]int{
		"inWindow": p.InWindow, "notSynced": p.NotSynced, "planned": len(p.Items), "unchanged": p.Unchanged,
		"knownUnusable": p.Unusable, "leftForOperator": p.Failed, "waiting": p.Waiting, "refusedCollections": len(p.Refused),
	}
	for _, it := range p.Items {
		c[it.Reason.countKey()]++
	}
	return c
}

// countKey is the name of the count of the calls planned for the reason,
// in camelCase like every key: plannedNew, plannedChanged.
func (r Reason) countKey() string {
	if r == "" {
		return "planned"
	}
	return "planned" + strings.ToUpper(string(r[:1])) + string(r[1:])
}

// BuildPlan reads the last good export and the stored personalizations and
// returns the calls a run would make. It makes no call and changes nothing.
func (j *Job) BuildPlan(ctx context.Context) (*Plan, error) {
	plan := &Plan{Tenant: j.opts.Tenant, Items: []Item{}}
	if !j.Enabled() {
		return plan, nil
	}
	src, ok, err := j.export(ctx)
	if err != nil {
		return nil, fmt.Errorf("open last good export: %w", err)
	}
	if !ok {
		return plan, nil
	}
	plan.Source = src.Name()
	now := j.opts.Now()
	hires, err := j.readHires(ctx, src, now)
	if err != nil {
		return nil, err
	}
	plan.InWindow = len(hires)
	collections, err := j.collections(ctx, plan, now)
	if err != nil {
		return nil, err
	}
	stored, err := j.store.Personalizations(ctx, j.opts.Tenant)
	if err != nil {
		return nil, err
	}
	for _, p := range hires {
		row, known, err := j.store.Person(ctx, j.opts.Tenant, p.ExternalID)
		if err != nil {
			return nil, err
		}
		if !known || !row.DepartedAt.IsZero() {
			plan.NotSynced++
			continue
		}
		fp := Fingerprint(p)
		for _, c := range collections {
			prev, has := stored[store.PersonalizationKey{ExternalID: p.ExternalID, CollectionID: c}]
			plan.add(Item{ExternalID: p.ExternalID, CollectionID: c, person: p, fingerprint: fp}, prev, has, now)
		}
	}
	return plan, nil
}

// readHires reads the accepted records of src whose start date is in the
// window at now, one per externalId, ordered by externalId.
func (j *Job) readHires(ctx context.Context, src sources.Source, now time.Time) ([]model.Person, error) {
	var hires []model.Person
	seen := map[string]bool{}
	_, err := src.Read(ctx, sources.Handler{
		Accept: func(p model.Person) error {
			if seen[p.ExternalID] || !InWindow(p.StartDate, now, j.opts.WindowBefore, j.opts.WindowAfter) {
				return nil
			}
			seen[p.ExternalID] = true
			hires = append(hires, p)
			return nil
		},
		Reject: func(model.Rejection) error { return nil }, // rejected rows are never personalized
		Retract: func(line int) error { // a duplicate found later: rejected too
			hires = slices.DeleteFunc(hires, func(p model.Person) bool { return p.Line == line })
			return nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src.Name(), err)
	}
	sort.Slice(hires, func(a, b int) bool { return hires[a].ExternalID < hires[b].ExternalID })
	return hires, nil
}

// collections returns the configured collections to personalize, in their
// order, less those the platform refused less than RecheckRefused before
// now, which go to plan.Refused.
func (j *Job) collections(ctx context.Context, plan *Plan, now time.Time) ([]string, error) {
	refused, err := j.store.RefusedCollections(ctx, j.opts.Tenant)
	if err != nil {
		return nil, err
	}
	var collections []string
	for _, c := range j.opts.Collections {
		if r, ok := refused[c]; ok && now.Sub(r.RefusedAt) < j.opts.RecheckRefused {
			plan.Refused = append(plan.Refused, r)
			continue
		}
		collections = append(collections, c)
	}
	return collections, nil
}

// add sorts the item of one person and collection into the plan by what
// is stored of it (prev, when has): a call to make, with its reason, or a
// count of why none is made.
func (p *Plan) add(it Item, prev store.Personalization, has bool, now time.Time) {
	switch {
	case !has:
		it.Reason = ReasonNew
	case prev.Fingerprint != int64(it.fingerprint):
		it.Reason = ReasonChanged
	case prev.State == store.PersonalizationPending:
		it.Reason = ReasonPending
	case prev.State == store.PersonalizationRetry && !now.Before(prev.NextAttemptAt):
		it.Reason = ReasonRetry
	case prev.State == store.PersonalizationRetry:
		p.Waiting++
		return
	case prev.State == store.PersonalizationDone:
		p.Unchanged++
		return
	case prev.State == store.PersonalizationError:
		p.Unusable++
		return
	default:
		p.Failed++
		return
	}
	if has {
		it.prev = &prev
	}
	p.Items = append(p.Items, it)
}
