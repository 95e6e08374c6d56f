package emulator

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// Limits are what the emulator refuses in a createPeople call, as a real
// platform would: a body too large (413), a person's string field too long
// or a balance too large (400 naming the field, "people[3].addBalance").
// They start from Options and change at run time (SetLimits,
// PUT /_emulator/limits), so that a test can have chosen people refused.
type Limits struct {
	// MaxBodyBytes bounds the body of every API request (413 beyond).
	MaxBodyBytes int64 `json:"maxBodyBytes"`
	// MaxFieldChars bounds each string field of a person, in characters.
	MaxFieldChars int `json:"maxFieldChars"`
	// MaxBalance bounds each addBalance and the request's amount.
	MaxBalance float64 `json:"maxBalance"`
}

func (l Limits) validate() error {
	var problems []error
	if l.MaxBodyBytes <= 0 {
		problems = append(problems, fmt.Errorf("max body bytes %d: want > 0", l.MaxBodyBytes))
	}
	if l.MaxFieldChars <= 0 {
		problems = append(problems, fmt.Errorf("max field chars %d: want > 0", l.MaxFieldChars))
	}
	if !(l.MaxBalance > 0) || math.IsInf(l.MaxBalance, 0) {
		problems = append(problems, fmt.Errorf("max balance %g: want a finite number > 0", l.MaxBalance))
	}
	return errors.Join(problems...)
}

// Limits returns the limits in force.
func (e *Emulator) Limits() Limits {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.limits
}

// SetLimits changes the limits; a zero field keeps its value. It returns
// the limits now in force. Reset restores those of Options.
func (e *Emulator) SetLimits(l Limits) (Limits, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.limits
	if l.MaxBodyBytes != 0 {
		next.MaxBodyBytes = l.MaxBodyBytes
	}
	if l.MaxFieldChars != 0 {
		next.MaxFieldChars = l.MaxFieldChars
	}
	if l.MaxBalance != 0 {
		next.MaxBalance = l.MaxBalance
	}
	if err := next.validate(); err != nil {
		return e.limits, err
	}
	e.limits = next
	return next, nil
}

// checkAmount refuses an amount that is negative, not a number or above
// the maximum.
func (l Limits) checkAmount(field string, v *float64) *apiError {
	switch {
	case v == nil:
		return nil
	case *v < 0 || math.IsNaN(*v):
		return errInvalid("%s: want a number from 0 to %s", field, formatLimit(l.MaxBalance))
	case *v > l.MaxBalance:
		return errInvalid("%s: above the maximum of %s", field, formatLimit(l.MaxBalance))
	}
	return nil
}

// checkFields refuses a person whose string field is longer than the limit.
func (l Limits) checkFields(where string, p *inputPerson) *apiError {
	for _, f := range []struct {
		name  string
		value *string
	}{
		{"externalId", p.ExternalID}, {"email", p.Email}, {"firstName", p.FirstName}, {"lastName", p.LastName},
		{"department", p.Department}, {"location", p.Location}, {"birthDate", p.BirthDate}, {"startDate", p.StartDate},
	} {
		if f.value == nil || len(*f.value) <= l.MaxFieldChars {
			continue // fewer bytes than the limit: fewer characters too
		}
		if n := utf8.RuneCountInString(*f.value); n > l.MaxFieldChars {
			return errInvalid("%s.%s: %d characters, longer than the maximum of %d", where, f.name, n, l.MaxFieldChars)
		}
	}
	return nil
}

// formatLimit renders a limit without an exponent ("1000000").
func formatLimit(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}
