package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"hrsync/api"
	"hrsync/emulator/personalization"
)

type personalizeBody struct {
	CompanyID    *string          `json:"companyId"`
	SourceFields *json.RawMessage `json:"sourceFields"`
}

type sourceFieldsBody struct {
	FirstName  *string `json:"firstName"`
	LastName   *string `json:"lastName"`
	Department *string `json:"department"`
	Location   *string `json:"location"`
	StartDate  *string `json:"startDate"`
	BirthDate  *string `json:"birthDate"`
}

// dateTimeShape is the shape of an RFC 3339 date-time. A value of that
// shape whose date does not exist (2023-02-30) is unusable (status Error),
// while a value of another shape breaks the contract (400).
func dateTimeShape() *regexp.Regexp {
	return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$`)
}

// parsePersonalize reads and checks a personalize body.
func parsePersonalize(b []byte) (companyID string, src personalization.Source, aerr *apiError) {
	var body personalizeBody
	if aerr := decodeJSON(b, &body, ""); aerr != nil {
		return "", src, aerr
	}
	if str(body.CompanyID) == "" {
		return "", src, errInvalid("companyId is required")
	}
	if body.SourceFields == nil || string(*body.SourceFields) == "null" {
		return "", src, errInvalid("sourceFields is required")
	}
	if t := strings.TrimSpace(string(*body.SourceFields)); !strings.HasPrefix(t, "{") {
		return "", src, errInvalid("sourceFields: want an object")
	}
	var sf sourceFieldsBody
	if aerr := decodeJSON(*body.SourceFields, &sf, "sourceFields"); aerr != nil {
		return "", src, aerr
	}
	shape := dateTimeShape()
	for _, d := range []struct {
		field string
		value *string
	}{{"startDate", sf.StartDate}, {"birthDate", sf.BirthDate}} {
		if d.value != nil && !shape.MatchString(*d.value) {
			return "", src, errInvalid("sourceFields.%s: want an RFC 3339 date-time, got %q", d.field, *d.value)
		}
	}
	src = personalization.Source{
		FirstName: str(sf.FirstName), LastName: str(sf.LastName),
		Department: str(sf.Department), Location: str(sf.Location),
		StartDate: str(sf.StartDate), BirthDate: str(sf.BirthDate),
	}
	return str(body.CompanyID), src, nil
}

// PersonalizeCollection derives the personalization fields. Unusable
// source fields answer status Error at once; fields already processed for
// this collection answer Done at once; otherwise the call blocks for the
// processing delay (until the request's context ends) and answers Pending,
// after which the same fields answer Done.
func (h apiHandlers) PersonalizeCollection(w http.ResponseWriter, r *http.Request, collectionID api.CollectionIdString) {
	b, aerr := readBody(r)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	companyID, src, aerr := parsePersonalize(b)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	if _, aerr := resolveCompany(r.Context(), &companyID); aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	e := h.e
	coll, ok := e.catalog.collections[collectionID]
	if !ok {
		writeAPIError(w, errNotFound("collection %q not found", collectionID))
		return
	}
	if !coll.Personalizable {
		writeAPIError(w, &apiError{status: http.StatusUnprocessableEntity, code: "not_personalizable",
			msg: "collection " + collectionID + " cannot be personalized"})
		return
	}
	sha := personalization.Sha(collectionID, src)
	fields, err := personalization.Derive(src, e.opts.Clock())
	if errors.Is(err, personalization.ErrUnusable) {
		writeJSON(w, http.StatusOK, api.PersonalizationResult{Sha: sha, Fields: api.PersonalizationFields{}, Status: api.ProcessingStatusError})
		return
	}
	e.mu.Lock()
	_, done := e.st.personalized[sha]
	delay := e.drawDelay()
	e.mu.Unlock()
	if done {
		writeJSON(w, http.StatusOK, api.PersonalizationResult{Sha: sha, Fields: fields, Status: api.ProcessingStatusDone})
		return
	}
	if !sleep(r.Context(), delay) {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "request ended before processing finished")
		return
	}
	e.mu.Lock()
	if _, already := e.st.personalized[sha]; !already {
		e.st.personalized[sha] = PersonalizationRecord{Sha: sha, CollectionID: collectionID, DoneAt: e.opts.Clock()}
	}
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, api.PersonalizationResult{Sha: sha, Fields: fields, Status: api.ProcessingStatusPending})
}

// drawDelay draws a personalize delay; the caller holds e.mu.
func (e *Emulator) drawDelay() time.Duration {
	d := e.delay
	if d.Max <= d.Min {
		return d.Min
	}
	return d.Min + time.Duration(e.rng.Int64N(int64(d.Max-d.Min)+1))
}
