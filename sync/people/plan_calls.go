package people

import (
	"encoding/binary"
	"math"
	"runtime"
)

// batching is how a plan's Create is cut into createPeople calls and what
// each person is granted: a plan derives its calls from its people when
// asked for them, and never holds them.
type batching struct {
	size           int     // people per call (0: a plan without calls)
	defaultBalance float64 // the addBalance of a row without one
	amount         float64 // the request-level amount the platform adds
}

// batching returns the job's batching, for its plans.
func (j *Job) batching() batching {
	return batching{size: j.opts.BatchSize, defaultBalance: j.opts.DefaultBalance, amount: j.opts.Amount}
}

// grant is what the person is granted in all (Job.grantFor's total),
// given the row's addBalance (nil: none).
func (b batching) grant(addBalance *float64) float64 {
	v := b.defaultBalance
	if addBalance != nil {
		v = *addBalance
	}
	return v + b.amount
}

// CallCount returns the number of createPeople calls applying the plan
// would make.
func (p *Plan) CallCount() int {
	if p.batching.size <= 0 {
		return 0
	}
	return (p.Create.Len() + p.batching.size - 1) / p.batching.size
}

// Call returns the i-th createPeople call applying the plan would make
// (0 <= i < CallCount()): the next batch of Create, in order.
func (p *Plan) Call(i int) PlannedCall {
	start := i * p.batching.size
	end := min(start+p.batching.size, p.Create.Len())
	c := PlannedCall{Operation: "createPeople", ExternalIDs: make([]string, 0, end-start), Grants: make([]float64, 0, end-start)}
	for k := start; k < end; k++ {
		g := grantOf(p, k)
		c.ExternalIDs = append(c.ExternalIDs, p.Create.externalIDAt(k))
		c.Grants = append(c.Grants, g)
		c.Total += g
	}
	return c
}

// grantOf returns what the plan grants the i-th person to create (0 for
// a plan without calls, as no call grants them anything).
func grantOf(p *Plan, i int) float64 {
	if p.batching.size <= 0 {
		return 0
	}
	return p.batching.grant(p.Create.addBalanceAt(i))
}

// callsTotal returns what the plan's calls grant in all: the sum of each
// call's total, each summed in order, as the calls list them.
func (p *Plan) callsTotal() float64 {
	var total float64
	for c := range p.CallCount() {
		start := c * p.batching.size
		var sum float64
		for k := start; k < min(start+p.batching.size, p.Create.Len()); k++ {
			sum += grantOf(p, k)
		}
		total += sum
	}
	return total
}

// externalIDAt returns the externalId of the i-th person, decoding only
// that.
func (l *People) externalIDAt(i int) string {
	_, b := l.fieldsAt(i)
	size, n := binary.Uvarint(b) // the first string of appendPerson
	id := string(b[n : n+int(size)])
	runtime.KeepAlive(l)
	return id
}

// addBalanceAt returns the addBalance of the i-th person (nil: none),
// decoding only that (no string of the record is copied).
func (l *People) addBalanceAt(i int) *float64 {
	flags, b := l.fieldsAt(i)
	if flags&hasBalance == 0 {
		return nil
	}
	for range 6 { // the six strings of appendPerson
		l, n := binary.Uvarint(b)
		b = b[n+int(l):]
	}
	for _, f := range [...]byte{hasStart, hasBirth} {
		if flags&f != 0 {
			_, n := binary.Varint(b)
			b = b[n:]
		}
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(b))
	runtime.KeepAlive(l)
	return &v
}
