// Package grants is the grants job: birthday, work-anniversary and campaign
// rules (config.Grants) turned into balance grants, each sent exactly once
// through the shared exactly-once sender (package sync/sender), one ledger
// key per tenant, person, rule and occurrence (the year of a yearly rule,
// the key of a campaign).
//
// A run grants as of a day of the rules' time zone (today, or a day the
// operator names): every occurrence whose grant day falls in the window of
// the look-back before it that the ledger does not hold yet, to the people
// the state says were active on that day. It stops before any call when the
// total would exceed the tenant's budget per run or per calendar month.
//
// The state keeps no birth date (DESIGN.md, invariant 5): a birthday rule
// reads the month and day of birth from the last good export, as the
// personalization job does, and keeps them in memory for the run only.
package grants

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/store"
	"hrsync/sync/personalize"
	"hrsync/sync/sender"
)

// voidNote is the note of an occurrence the job voids because its person
// had left on its day.
const voidNote = "not granted: the person had left on the day (grants job)"

// ErrLocked says another run of the grants job of the tenant holds the lock.
var ErrLocked = model.ErrLocked

// Options configure the grants job of one tenant.
type Options struct {
	Tenant       string
	CompanyID    string
	CollectionID string
	// Grants are the tenant's rules, time zone, look-back and budget.
	Grants config.Grants
	// BatchSize and Concurrency shape the createPeople calls (the people
	// policy's values).
	BatchSize   int
	Concurrency int
	// TrustIdempotencyKey lets held calls be resent with their key.
	TrustIdempotencyKey bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// FinishTimeout bounds the commit of the run's outcome after ctx ends.
	FinishTimeout time.Duration
}

// Job is the grants job of one tenant.
type Job struct {
	opts    Options
	store   Store
	journal sender.Journal
	api     sender.Creator
	export  personalize.LastExport
	log     *zap.Logger
}

// New returns the grants job of a tenant, which keeps its state in st and
// sends its grants through Senders opened on journal. api may be nil for a
// job that only plans; export may be nil when no rule is a birthday.
func New(opts Options, st Store, journal sender.Journal, api sender.Creator, export personalize.LastExport,
	log *zap.Logger) (*Job, error) {
	if opts.Tenant == "" || st == nil {
		return nil, errors.New("grants: a tenant and a store are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FinishTimeout == 0 {
		opts.FinishTimeout = 30 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Job{opts: opts, store: st, journal: journal, api: api, export: export, log: log}, nil
}

// Enabled reports whether the tenant has any grant rule.
func (j *Job) Enabled() bool { return len(j.opts.Grants.Rules) > 0 }

// RunFlags are an operator's choices for one run.
type RunFlags struct {
	// AsOf, when not zero, is the day the run grants as of (a calendar
	// date of the rules' time zone, UTC midnight) instead of today; it may
	// not be after today.
	AsOf time.Time
	// OverrideSafeguards lets the run exceed the budget, once.
	OverrideSafeguards bool
}

// RunOnce runs one cycle of the grants job under the lock
// "grants-<tenant>": it holds the calls a crashed run left in flight,
// resends held calls when the operator trusts Idempotency-Key, plans the
// grants due, stops before any call when the budget would be exceeded,
// sends the rest rule by rule, records the day processed per rule, and
// records the run. It returns ErrLocked at once when another run holds the
// lock.
func (j *Job) RunOnce(ctx context.Context, flags RunFlags) (*Report, error) {
	rep := newReport(j.opts.Tenant)
	if !j.Enabled() {
		return rep, nil
	}
	if j.api == nil {
		return rep, errors.New("grants: no API client")
	}
	if today := day(j.opts.Now(), j.opts.Grants.Location()); flags.AsOf.After(today) {
		return rep, fmt.Errorf("grants: --date %s is after today (%s in %s): a run never grants ahead of the day",
			flags.AsOf.Format("2006-01-02"), today.Format("2006-01-02"), j.opts.Grants.Location())
	}
	release, err := runner.LockJob(ctx, j.store, model.JobGrants, j.opts.Tenant, j.log)
	if err != nil {
		return nil, err
	}
	defer release()
	rep.RunID = uuid.NewString()
	if err := j.store.StartRun(ctx, store.Run{ID: rep.RunID, Job: model.JobGrants, Tenant: j.opts.Tenant}); err != nil {
		return rep, fmt.Errorf("record run start: %w", err)
	}
	log := j.log.With(zap.String("run", rep.RunID))
	err = j.cycle(ctx, log, rep, flags)
	rep.settle(err)
	if runner.CutShort(ctx, rep.outcome) == model.OutcomeInterrupted {
		log.Warn("grants cut short: the process is stopping", zap.NamedError("cause", err))
		rep.outcome, rep.Cause, rep.Next = model.OutcomeInterrupted, runner.ErrCut.Error(), "nothing to do: the next run grants what is still due"
		if err != nil {
			err = runner.Cut(err)
		}
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.opts.FinishTimeout)
	defer cancel()
	var runErr error
	if err != nil {
		runErr = err
	} else if rep.Cause != "" && rep.outcome != model.OutcomeOK {
		runErr = errors.New(rep.Cause)
	}
	if ferr := j.store.FinishRun(fctx, store.RunResult{ID: rep.RunID, Outcome: rep.outcome, Counts: rep.Counts, Err: runErr}); ferr != nil {
		err = errors.Join(err, fmt.Errorf("record run outcome: %w", ferr))
	}
	held, herr := j.heldGrants(fctx)
	if herr == nil {
		rep.HeldGrants = held
	}
	if err == nil {
		log.Info("grants done", zap.String("outcome", string(rep.outcome)), zap.Any("counts", rep.Counts))
	} else {
		log.Error("grants failed", zap.Error(err))
	}
	return rep, err
}

// cycle is the work of one run, between its start and its record.
func (j *Job) cycle(ctx context.Context, log *zap.Logger, rep *Report, flags RunFlags) error {
	senders, err := j.holdAndResend(ctx, log, rep)
	if err != nil {
		return err
	}
	plan, err := j.BuildPlan(ctx, flags.AsOf)
	if err != nil {
		return err
	}
	rep.Plan = plan
	for _, rp := range plan.Rules {
		rep.rule(rp.Rule)
	}
	if err := j.keepPlanState(ctx, plan); err != nil {
		return err
	}
	if plan.Safeguard != "" && !flags.OverrideSafeguards {
		rep.safeguard = plan.Safeguard
		log.Warn("budget safeguard: no call made", zap.String("why", plan.Safeguard))
		return nil
	}
	for _, rp := range plan.Rules {
		rep.rule(rp.Rule).Skipped += rp.Skipped
	}
	stopped, err := j.sendDue(ctx, rep, plan, senders)
	if err != nil || stopped {
		return err
	}
	names := make([]string, len(j.opts.Grants.Rules))
	for i, r := range j.opts.Grants.Rules {
		names[i] = r.Name
	}
	return j.store.MarkGrantDays(ctx, j.opts.Tenant, names, plan.Day.Time)
}

// holdAndResend opens each rule's sender, holds the grants an interrupted run
// left unknown and, when the operator trusts the Idempotency-Key, resends
// the held ones.
func (j *Job) holdAndResend(ctx context.Context, log *zap.Logger, rep *Report) (map[string]*sender.Sender, error) {
	senders := make(map[string]*sender.Sender, len(j.opts.Grants.Rules))
	for _, r := range j.opts.Grants.Rules {
		s, err := j.sender(r)
		if err != nil {
			return nil, err
		}
		senders[r.Name] = s
		n, err := s.HoldInterrupted(ctx)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			log.Warn("grants of an interrupted run held for an operator", zap.String("rule", r.Name), zap.Int("grants", n))
			rep.rule(r.Name).Held += n
		}
		if j.opts.TrustIdempotencyKey {
			res, err := s.ResendHeld(ctx, rep.RunID, j.lookup(ctx))
			if err != nil {
				return nil, err
			}
			rep.add(r.Name, res)
		}
	}
	return senders, nil
}

// keepPlanState records what the plan learnt before any call: the birthdays
// to keep and to forget, and the occurrences that are no longer due.
func (j *Job) keepPlanState(ctx context.Context, plan *Plan) error {
	if err := j.store.SaveBirthdays(ctx, j.opts.Tenant, plan.births); err != nil {
		return err
	}
	if err := j.store.ForgetBirthdays(ctx, j.opts.Tenant, plan.forget); err != nil {
		return err
	}
	_, err := j.store.VoidOccurrences(ctx, model.JobGrants, plan.voids, voidNote)
	return err
}

// sendDue sends each rule's due grants, round by round. stopped says a
// refused token or a stop ended the sending early: the day is then not
// marked processed, and the next run sends what is still due.
func (j *Job) sendDue(ctx context.Context, rep *Report, plan *Plan, senders map[string]*sender.Sender) (stopped bool, err error) {
	for _, r := range j.opts.Grants.Rules {
		for _, items := range rounds(plan, r.Name) {
			res, err := senders[r.Name].Send(ctx, rep.RunID, items)
			if res != nil {
				rep.add(r.Name, res)
			}
			if err != nil {
				return false, fmt.Errorf("rule %s: %w", r.Name, err)
			}
			if j.stopSending(ctx, res) {
				return true, nil
			}
		}
	}
	return false, nil
}

// stopSending tells whether no more sends may start: the platform refused
// the token or the company, or the run is stopped.
func (j *Job) stopSending(ctx context.Context, res *sender.Result) bool {
	_, fatal := res.Fatal()
	return fatal || ctx.Err() != nil
}

// sender is the exactly-once sender of one rule.
func (j *Job) sender(r config.GrantRule) (*sender.Sender, error) {
	return j.journal.Sender(sender.Options{
		Tenant:              j.opts.Tenant,
		CompanyID:           j.opts.CompanyID,
		CollectionID:        j.opts.CollectionID,
		Job:                 model.JobGrants,
		Rule:                r.Name,
		BatchSize:           j.opts.BatchSize,
		Concurrency:         j.opts.Concurrency,
		SendEmail:           r.ShouldSendEmail,
		TrustIdempotencyKey: j.opts.TrustIdempotencyKey,
	}, j.api, j.log.With(zap.String("rule", r.Name)))
}

// rounds splits a rule's due grants into sends in which each person appears
// once (a long look-back can owe one person two occurrences): a person's
// n-th grant goes in the n-th send.
func rounds(plan *Plan, rule string) []sender.List {
	var out []sender.List
	seen := map[string]int{}
	for _, d := range plan.Due {
		if d.Rule != rule {
			continue
		}
		n := seen[d.ExternalID]
		seen[d.ExternalID]++
		if n == len(out) {
			out = append(out, sender.List{})
		}
		out[n] = append(out[n], sender.Item{
			Person: personOf(plan.people[d.ExternalID]),
			Grant:  sender.Grant{Reason: d.Rule, Occurrence: d.Occurrence, AddBalance: d.Amount, Day: d.Day.Time},
		})
	}
	return out
}

// personOf is the person a grant's call sends: the state's fields (no birth
// date); the platform finds the existing person and adds the balance.
func personOf(r store.PersonRow) model.Person {
	return model.Person{
		ExternalID: r.ExternalID, Email: r.Email, FirstName: r.FirstName, LastName: r.LastName,
		Department: r.Department, Location: r.Location, StartDate: r.StartDate,
	}
}

// lookup finds a person of a held call in the state, to send it again.
func (j *Job) lookup(ctx context.Context) sender.Lookup {
	return func(externalID string) (model.Person, bool) {
		r, ok, err := j.store.Person(ctx, j.opts.Tenant, externalID)
		if err != nil || !ok {
			return model.Person{}, false
		}
		return personOf(r), true
	}
}

// heldGrants counts the tenant's grants of the rules that are held.
func (j *Job) heldGrants(ctx context.Context) (int, error) {
	n := 0
	for _, r := range j.opts.Grants.Rules {
		gs, err := j.store.ListGrants(ctx, store.GrantFilter{Tenant: j.opts.Tenant, Reason: r.Name, States: heldStates()})
		if err != nil {
			return 0, err
		}
		n += len(gs)
	}
	return n, nil
}
