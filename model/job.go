package model

import "errors"

// Job names a job a run performs.
type Job string

// The jobs.
const (
	JobPeople      Job = "people"
	JobPersonalize Job = "personalize"
	JobOrders      Job = "orders"
	JobGrants      Job = "grants"
)

// RunOutcome is how a run ended.
type RunOutcome string

// The outcomes of a run.
const (
	OutcomeRunning   RunOutcome = "running"   // not finished (or crashed)
	OutcomeOK        RunOutcome = "ok"        // everything done
	OutcomeAttention RunOutcome = "attention" // done, with rejections or held grants to look at
	OutcomeFailed    RunOutcome = "failed"    // an error stopped it
	OutcomeSafeguard RunOutcome = "safeguard" // a safeguard stopped it before any API call
	OutcomeLocked    RunOutcome = "locked"    // another run held the lock
	// OutcomeInterrupted: the process stopped (a stop that cut the run
	// short, a kill, a crash) before the run finished; the next run of the
	// job and tenant picks its work up.
	OutcomeInterrupted RunOutcome = "interrupted"
)

// FinishedOutcomes lists the outcomes a finished run may have (all but
// running), from best to worst.
func FinishedOutcomes() []RunOutcome {
	return []RunOutcome{OutcomeOK, OutcomeAttention, OutcomeLocked, OutcomeInterrupted, OutcomeSafeguard, OutcomeFailed}
}

// ErrLocked is returned when another run of the same job and tenant holds
// the job's lock.
var ErrLocked = errors.New("lock held by another run")
