package sender

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"hrsync/apiclient"
	"hrsync/model"
	"hrsync/store"
)

// Refusal is a person the platform refused on their own: the batch they
// were sent in was refused as invalid because of some of its people, split
// in halves until each person had an outcome, and this one was still
// refused alone. Their grant is not applied (the call was refused, so a
// later send cannot apply it twice).
type Refusal struct {
	ExternalID string `json:"externalId"`
	// Line is the line of the person's row in the export.
	Line int `json:"line"`
	// Field is the field the platform named in its error ("addBalance"),
	// or "" when it named none.
	Field string `json:"field,omitempty"`
	// Status and Code are the platform's answer (400 invalid_input).
	Status int    `json:"status"`
	Code   string `json:"code,omitempty"`
	// Reason says it for a person: "refused by the platform: 400
	// invalid_input: addBalance: ...", at most maxReason characters, with
	// any quoted value the platform echoed masked.
	Reason string `json:"reason"`
}

// Rejection is the refusal as a rejected row of the export source.
func (r Refusal) Rejection(source string) model.Rejection {
	return model.Rejection{Source: source, Line: r.Line, Field: r.Field, Reason: r.Reason}
}

// splittable tells whether a refused createPeople call is refused because
// of some of its people, so that sending its people in smaller batches
// gets the others created: a 413 (the body is too large: some people are),
// or a 400 or 422 whose message names a person ("people[3].addBalance:
// ..."). A 400 that names no person ("collectionId is required") is about
// the request itself: every part would be refused the same way, so it is
// not split, and the run fails as it did before. Only a call that was
// certainly not applied is ever split.
func splittable(e *apiclient.Error) bool {
	if e == nil || e.Outcome != apiclient.OutcomeNotApplied {
		return false
	}
	switch e.Status {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		_, _, ok := personPath(e.Message)
		return ok
	}
	return false
}

// personPath finds the first "people[N]" in a platform's message, and the
// field after it ("people[3].addBalance" names addBalance); end is where
// the path ends in msg.
func personPath(msg string) (field string, end int, ok bool) {
	const prefix = "people["
	from := 0
	for {
		i := strings.Index(msg[from:], prefix)
		if i < 0 {
			return "", 0, false
		}
		i += from + len(prefix)
		j := i
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			j++
		}
		if j > i && j < len(msg) && msg[j] == ']' {
			end = j + 1
			if end < len(msg) && msg[end] == '.' {
				k := end + 1
				for k < len(msg) && isIdentByte(msg[k]) {
					k++
				}
				if k > end+1 {
					return msg[end+1 : k], k, true
				}
			}
			return "", end, true
		}
		from = i
	}
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// RefusedAlone tells whether call, a grant's last recorded call, is one the
// platform refused because of its only person (see splittable): the grant
// is not applied, and the same content would be refused the same way.
func RefusedAlone(call store.JournalEntry) bool {
	return call.State == store.JournalNotApplied && call.ItemCount == 1 && splittable(&apiclient.Error{
		Status: call.HTTPStatus, Message: call.ErrorMessage, Outcome: apiclient.OutcomeNotApplied,
	})
}

// GrantRefusedAlone tells whether the grant of key is not applied because
// the platform refused its person alone (RefusedAlone of its last call);
// false when the ledger has no such grant or call.
func (s *Sender) GrantRefusedAlone(ctx context.Context, key string) (bool, error) {
	g, err := s.store.Grant(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read grant: %w", err)
	}
	if g.State != model.GrantNotApplied {
		return false, nil
	}
	call, err := s.store.GrantCall(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the call: %w", err)
	}
	return RefusedAlone(call), nil
}

// maxReason bounds a refusal's reason, in characters.
const maxReason = 200

// refusalOf is the refusal of person p, refused alone with e.
func refusalOf(p model.Person, e *apiclient.Error) Refusal {
	r := Refusal{ExternalID: p.ExternalID, Line: p.Line, Status: e.Status, Code: e.Code}
	msg := e.Message
	if field, end, ok := personPath(msg); ok && field != "" {
		// The request held this person alone: "people[0]." says nothing.
		r.Field = field
		start := strings.Index(msg, "people[")
		msg = msg[:start] + field + msg[end:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "refused by the platform: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if msg = maskQuoted(strings.TrimSpace(msg)); msg != "" {
		b.WriteString(": " + msg)
	}
	r.Reason = cut(b.String(), maxReason)
	return r
}

// maskQuoted replaces every double-quoted part of a platform's message by
// "…": a platform may echo the value it refused (a birth date, an e-mail),
// which must not reach a report.
func maskQuoted(msg string) string {
	if !strings.Contains(msg, `"`) {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		j := strings.IndexByte(msg[i+1:], '"')
		if j < 0 {
			// An unclosed quote: what follows may be the value.
			b.WriteString(msg[:i] + `"…`)
			return b.String()
		}
		b.WriteString(msg[:i] + `"…"`)
		msg = msg[i+1+j+1:]
	}
}

// cut shortens s to at most n characters, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
