package sender

import "sync/atomic"

// callSlots bounds the createPeople calls of one Send that are in flight
// or about to be: a slot is taken before a call's intent is committed and
// released when its answer arrives, before its outcome is committed.
//
// The outcome's commit is left out of the slot because the commits of one
// tenant's batches wait on each other in PostgreSQL: the intent's people
// and the outcome's platform ids both write the tenant's people, whose
// version (people_versions, bumped by a trigger) is one row, locked until
// the commit. When a slot held the call's intent, answer and outcome, the
// calls could go no faster than Concurrency over the three, and the queue
// on that row made a first import of 20,000 people run at 0.6-0.9 of the
// rate limit on a busy machine (docs/benchmarks.md, issue 22 item 5).
//
// The order of the exactly-once protocol is unchanged: every call's intent
// is committed before the call, its outcome after its answer, by the same
// goroutine.
type callSlots struct {
	free chan struct{}
	// refused is set, before its slot is released, by a call whose
	// answer stops the send (a refused token or company), so that no
	// call that takes the slot after it is made.
	refused atomic.Bool
}

// newCallSlots returns n slots.
func newCallSlots(n int) *callSlots { return &callSlots{free: make(chan struct{}, n)} }

// take waits for a free slot and returns it, held. A send's calls finish
// within the client's timeouts, so the wait is bounded; it does not end
// with the send's context, whose cancellation the caller checks once the
// slot is held.
func (c *callSlots) take() *callSlot {
	c.free <- struct{}{}
	return &callSlot{slots: c, held: true}
}

// callSlot is one taken slot of callSlots, used by one goroutine.
type callSlot struct {
	slots *callSlots
	held  bool
}

// answered releases the slot of a call whose answer (or error) arrived;
// a fatal answer is recorded first (callSlots.refused).
func (s *callSlot) answered(fatal bool) {
	if s == nil {
		return
	}
	if fatal {
		s.slots.refused.Store(true)
	}
	s.release()
}

// release gives the slot back; releasing it again, or a nil slot, does
// nothing.
func (s *callSlot) release() {
	if s == nil || !s.held {
		return
	}
	s.held = false
	<-s.slots.free
}
