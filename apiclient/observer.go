package apiclient

import "time"

// Operation names one operation of the platform's API, as the contract's
// operationId does.
type Operation string

// The operations the Client performs.
const (
	OpCreatePeople   Operation = "createPeople"
	OpPersonalize    Operation = "personalizeCollection"
	OpGetProduct     Operation = "getProduct"
	OpGetOrderStatus Operation = "getOrderStatus"
	OpListOrders     Operation = "listOrders"
)

// Operations lists every operation the Client performs.
func Operations() []Operation {
	return []Operation{OpCreatePeople, OpPersonalize, OpGetProduct, OpGetOrderStatus, OpListOrders}
}

// Observer is told what the Client does, so that metrics can be added
// without touching the Client. Its methods are called from the goroutines
// that make calls, possibly at the same time, and must not block.
type Observer interface {
	// OnCall reports one HTTP attempt: the status answered (0 if none),
	// how long it took, and its error (nil on success, else an *Error).
	OnCall(op Operation, status int, took time.Duration, err error)
	// OnRetry reports that attempt number attempt (2 for the first retry)
	// will be made after waiting wait.
	OnRetry(op Operation, attempt int, wait time.Duration)
	// OnRateLimitWait reports that an attempt waits wait for the client-side
	// rate limit before it is sent.
	OnRateLimitWait(op Operation, wait time.Duration)
}

// ObserverFuncs is an Observer built from functions; a nil field ignores
// its event.
type ObserverFuncs struct {
	Call          func(op Operation, status int, took time.Duration, err error)
	Retry         func(op Operation, attempt int, wait time.Duration)
	RateLimitWait func(op Operation, wait time.Duration)
}

// OnCall calls f.Call, if set.
func (f ObserverFuncs) OnCall(op Operation, status int, took time.Duration, err error) {
	if f.Call != nil {
		f.Call(op, status, took, err)
	}
}

// OnRetry calls f.Retry, if set.
func (f ObserverFuncs) OnRetry(op Operation, attempt int, wait time.Duration) {
	if f.Retry != nil {
		f.Retry(op, attempt, wait)
	}
}

// OnRateLimitWait calls f.RateLimitWait, if set.
func (f ObserverFuncs) OnRateLimitWait(op Operation, wait time.Duration) {
	if f.RateLimitWait != nil {
		f.RateLimitWait(op, wait)
	}
}
