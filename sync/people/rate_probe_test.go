package people_test

import (
	"context"
	"sync"
	"time"

	"hrsync/api"
	"hrsync/apiclient"
	"hrsync/store"
	"hrsync/sync/sender"
)

// phaseTimes adds up, over a run, the time the sender spends in each step
// of the exactly-once protocol: the intent's commit, the call (its wait
// for the rate limiter included), the rate limiter's waits alone, and the
// outcome's commit. BenchmarkFirstImportAtRate reports their means per
// call, to show which step holds a call's slot.
type phaseTimes struct {
	mu                                     sync.Mutex
	intent, call, rateWait, http, finish   time.Duration
	intents, calls, waits, https, finishes int
}

// add adds d to the total *sum and one to the count *n.
func (p *phaseTimes) add(sum *time.Duration, n *int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*sum += d
	*n++
}

// mean is sum / n in milliseconds, 0 when n is 0.
func mean(sum time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum.Seconds() * 1000 / float64(n)
}

// timedStore is a sender.Store that times BeginBatch and FinishBatch.
// With a serial time, each of them first holds one lock shared by all
// for that long, as the commits of one tenant's people queue on one row
// of PostgreSQL (people_versions): a store slower to commit, whatever
// the machine's load.
type timedStore struct {
	sender.Store
	times  *phaseTimes
	serial time.Duration
	queue  *sync.Mutex
}

// wait holds the shared lock for the serial time.
func (s timedStore) wait() {
	if s.serial <= 0 {
		return
	}
	s.queue.Lock()
	defer s.queue.Unlock()
	time.Sleep(s.serial)
}

// BeginBatch commits the intent, timed.
func (s timedStore) BeginBatch(ctx context.Context, in store.BatchIntent) (int64, error) {
	began := time.Now()
	defer func() { s.times.add(&s.times.intent, &s.times.intents, time.Since(began)) }()
	s.wait()
	return s.Store.BeginBatch(ctx, in)
}

// FinishBatch commits the outcome, timed.
func (s timedStore) FinishBatch(ctx context.Context, journalID int64, out store.BatchOutcome) error {
	began := time.Now()
	defer func() { s.times.add(&s.times.finish, &s.times.finishes, time.Since(began)) }()
	s.wait()
	return s.Store.FinishBatch(ctx, journalID, out)
}

// timedCreator is a sender.Creator that times each call.
type timedCreator struct {
	sender.Creator
	times *phaseTimes
}

// CreatePeople makes the call, timed.
func (c timedCreator) CreatePeople(ctx context.Context, req api.CreatePeopleRequest, key string) ([]api.ReturnedPerson, error) {
	began := time.Now()
	defer func() { c.times.add(&c.times.call, &c.times.calls, time.Since(began)) }()
	return c.Creator.CreatePeople(ctx, req, key)
}

// observer is the client's observer that adds the rate limiter's waits
// and the HTTP exchanges' times.
func (p *phaseTimes) observer() apiclient.Observer {
	return apiclient.ObserverFuncs{
		RateLimitWait: func(_ apiclient.Operation, d time.Duration) { p.add(&p.rateWait, &p.waits, d) },
		Call:          func(_ apiclient.Operation, _ int, d time.Duration, _ error) { p.add(&p.http, &p.https, d) },
	}
}
