package sender

// How a createPeople answer accounts for the people sent (DESIGN.md,
// invariant 1): people it leaves out are held, never taken as applied.

import (
	"slices"
	"strings"

	"go.uber.org/zap"

	"hrsync/api"
	"hrsync/model"
)

// answerMatch is how a createPeople answer accounts for the people sent.
type answerMatch struct {
	// ids maps the externalId of each person accounted for to the id the
	// platform returned for them.
	ids map[string]string
	// unaccounted lists the externalIds of the people sent that no returned
	// person accounts for, in the order sent.
	unaccounted []string
	// ambiguous counts the people sent whose e-mail came back with more
	// than one id; they are among the unaccounted.
	ambiguous int
	// extra counts the returned people that match nobody sent.
	extra int
}

// remoteIDs matches the answer of a createPeople call to the people sent.
// The answer names people by e-mail only (compared trimmed and without
// case): a sent person is accounted for when exactly one platform id came
// back for their e-mail. A person whose e-mail came back with two ids, or
// not at all, or with an empty id, is unaccounted. The same person returned
// twice with the same id counts once; returned people nobody sent are
// counted as extra and otherwise ignored.
func remoteIDs(sent []api.InputPerson, got []api.ReturnedPerson) answerMatch {
	byEmail := make(map[string][]string, len(got))
	for _, r := range got {
		if e := normEmail(r.Email); e != "" && r.Id != "" && !slices.Contains(byEmail[e], r.Id) {
			byEmail[e] = append(byEmail[e], r.Id)
		}
	}
	m := answerMatch{ids: make(map[string]string, len(sent))}
	wanted := make(map[string]bool, len(sent))
	for _, p := range sent {
		ext := deref(p.ExternalId)
		e := normEmail(deref(p.Email))
		if e != "" {
			wanted[e] = true
		}
		switch ids := byEmail[e]; len(ids) {
		case 1:
			m.ids[ext] = ids[0]
		case 0:
			m.unaccounted = append(m.unaccounted, ext)
		default:
			m.ambiguous++
			m.unaccounted = append(m.unaccounted, ext)
		}
	}
	for _, r := range got {
		if !wanted[normEmail(r.Email)] {
			m.extra++
		}
	}
	return m
}

func normEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// externalIDs lists the externalIds of the people sent.
func externalIDs(sent []api.InputPerson) []string {
	out := make([]string, 0, len(sent))
	for _, p := range sent {
		out = append(out, deref(p.ExternalId))
	}
	return out
}

// settled splits a succeeded call's grants: those of the people accounted
// for were applied (created, granted); the others are held (unknown).
func settled(grants []model.Grant, unaccounted []string) (created int, granted float64, unknown int) {
	held := make(map[string]bool, len(unaccounted))
	for _, id := range unaccounted {
		held[id] = true
	}
	for _, g := range grants {
		if held[g.ExternalID] {
			unknown++
			continue
		}
		created++
		granted += g.Amount
	}
	return created, granted, unknown
}

// maxLoggedIDs bounds the externalIds one warning lists.
const maxLoggedIDs = 20

// warnUnaccounted logs a success answer that left people unaccounted for or
// returned people nobody sent: counts, and the first externalIds held
// (never e-mails).
func (s *Sender) warnUnaccounted(journalID int64, sent, returned int, m answerMatch, unaccounted []string) {
	if len(unaccounted) == 0 && m.extra == 0 {
		return
	}
	fields := []zap.Field{zap.Int64("journal", journalID), zap.Int("sent", sent), zap.Int("returned", returned),
		zap.Int("unaccounted", len(unaccounted)), zap.Int("ambiguous", m.ambiguous), zap.Int("extra", m.extra)}
	if len(unaccounted) == 0 {
		s.log.Warn("createPeople answer returned people that were not sent; ignored", fields...)
		return
	}
	fields = append(fields, zap.Strings("heldExternalIds", unaccounted[:min(len(unaccounted), maxLoggedIDs)]))
	s.log.Warn("createPeople answer did not account for every person sent: their grants are held as unknown; "+
		"check the platform, then 'hrsync grants confirm' or 'grants release'", fields...)
}
