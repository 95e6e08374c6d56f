package apiclient

import (
	"context"
	"errors"
	"net/http"
)

// Class sorts a failed call by what it means for a run's outcome: whether
// any other call of the run could succeed, and what an operator does about it.
type Class string

// The classes of a failed call.
const (
	// ClassUnauthorized: the platform refused the token (401).
	ClassUnauthorized Class = "unauthorized"
	// ClassForbidden: the token may not act for the company (403).
	ClassForbidden Class = "forbidden"
	// ClassUnreachable: no answer came, after the retries (connection
	// refused, a name that does not resolve, a timeout before any answer).
	ClassUnreachable Class = "unreachable"
	// ClassRateLimited: the platform kept answering 429 or 503 with
	// Retry-After until the retries ran out.
	ClassRateLimited Class = "rateLimited"
	// ClassRefused: the platform refused the request as invalid (another 4xx).
	ClassRefused Class = "refused"
	// ClassServerError: the platform failed (a 5xx without Retry-After);
	// the request may or may not have been applied.
	ClassServerError Class = "serverError"
	// ClassBadAnswer: an answer that could not be read or made no sense.
	ClassBadAnswer Class = "badAnswer"
	// ClassStopped: the run was cancelled (shutdown) before an answer came.
	ClassStopped Class = "stopped"
	// ClassOther: anything else.
	ClassOther Class = "other"
)

// ClassOf sorts err; nil has no class ("").
func ClassOf(err error) Class {
	if err == nil {
		return ""
	}
	e, ok := AsError(err)
	if !ok {
		if errors.Is(err, context.Canceled) {
			return ClassStopped
		}
		return ClassOther
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		return ClassUnauthorized
	case e.Status == http.StatusForbidden:
		return ClassForbidden
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusServiceUnavailable && e.Outcome == OutcomeNotApplied:
		return ClassRateLimited
	case e.Status >= 500:
		return ClassServerError
	case e.Status >= 400:
		return ClassRefused
	case errors.Is(e.Err, ErrBadResponse), errors.Is(e.Err, ErrUnexpectedStatus), e.Status != 0:
		return ClassBadAnswer
	case errors.Is(e.Err, context.Canceled):
		return ClassStopped
	case errors.Is(e.Err, ErrInvalidRequest):
		return ClassRefused
	}
	return ClassUnreachable
}

// Fatal reports whether a failure of this class means that no call of the
// run can succeed: the token or the company is refused. Such a run failed,
// whatever else it did.
func (c Class) Fatal() bool {
	return c == ClassUnauthorized || c == ClassForbidden
}

// Describe says in a few words what the platform did, for an operator.
func (c Class) Describe() string {
	switch c {
	case ClassUnauthorized:
		return "the platform refused the token (401 unauthorized)"
	case ClassForbidden:
		return "the platform refused the company for this token (403 forbidden)"
	case ClassUnreachable:
		return "the platform could not be reached"
	case ClassRateLimited:
		return "the platform kept rate-limiting the calls (429)"
	case ClassRefused:
		return "the platform refused the request as invalid"
	case ClassServerError:
		return "the platform failed (5xx); whether it applied the calls is unknown"
	case ClassBadAnswer:
		return "the platform's answer could not be used"
	case ClassStopped:
		return "the run was stopped before the platform answered"
	case "":
		return "no failure"
	}
	return "the call failed"
}

// NextStep says what an operator does about a failure of this class.
func (c Class) NextStep() string {
	switch c {
	case ClassUnauthorized:
		return "check HRSYNC_API_TOKEN (or api.tokenFile)"
	case ClassForbidden:
		return "check the tenant's companyId and that the token may act for that company"
	case ClassUnreachable:
		return "check api.baseUrl (HRSYNC_API_BASE_URL) and the network"
	case ClassRateLimited:
		return "the next run sends them again; lower api.ratePerSecond if it repeats"
	case ClassRefused:
		return "correct what the platform refused: its reason is in the logs (the failed call's error)"
	case ClassServerError:
		return "check the platform, then 'hrsync grants list' and confirm or release the held grants"
	case ClassBadAnswer:
		return "see the logs for the answer's problem and check the platform"
	}
	return "see the logs"
}
