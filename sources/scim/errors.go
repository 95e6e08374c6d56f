package scim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"hrsync/sources/scim/directory"
)

// scimType values of RFC 7644 section 3.12 this service provider answers with.
const (
	typeInvalidFilter = "invalidFilter"
	typeUniqueness    = "uniqueness"
	typeInvalidSyntax = "invalidSyntax"
	typeInvalidPath   = "invalidPath"
	typeNoTarget      = "noTarget"
	typeInvalidValue  = "invalidValue"
	typeMutability    = "mutability"
	typeInvalidVers   = "invalidVers"
)

// Error is a SCIM error answer: an HTTP status, an optional scimType and a detail that never holds
// a person's data.
type Error struct {
	Status   int
	ScimType string
	Detail   string
}

// Error implements error.
func (e *Error) Error() string {
	if e.ScimType == "" {
		return fmt.Sprintf("scim %d: %s", e.Status, e.Detail)
	}
	return fmt.Sprintf("scim %d %s: %s", e.Status, e.ScimType, e.Detail)
}

func newError(status int, scimType, format string, args ...any) *Error {
	return &Error{Status: status, ScimType: scimType, Detail: fmt.Sprintf(format, args...)}
}

func badRequest(scimType, format string, args ...any) *Error {
	return newError(http.StatusBadRequest, scimType, format, args...)
}

// errorBody is the JSON shape of a SCIM error (RFC 7644 section 3.12): status is a string.
type errorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail,omitempty"`
}

// asError turns any error of a request into the SCIM error to answer with.
func asError(err error) *Error {
	var se *Error
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &tooBig):
		return newError(http.StatusRequestEntityTooLarge, "", "the request body is larger than %d bytes", tooBig.Limit)
	case errors.Is(err, directory.ErrNotFound):
		return newError(http.StatusNotFound, "", "no such user")
	case errors.Is(err, directory.ErrConflict):
		return newError(http.StatusConflict, typeUniqueness, "%s", conflictDetail(err))
	case errors.Is(err, directory.ErrVersionMismatch):
		return newError(http.StatusPreconditionFailed, "", "the user has changed: its version is not the one in If-Match")
	case errors.Is(err, directory.ErrInvalid):
		return badRequest(typeInvalidValue, "userName is required")
	default:
		return newError(http.StatusInternalServerError, "", "internal error")
	}
}

func conflictDetail(err error) string {
	if errors.Is(err, directory.ErrConflict) && strings.Contains(err.Error(), "externalId") {
		return "another user already has this externalId"
	}
	return "another user already has this userName"
}

func writeError(w http.ResponseWriter, e *Error) {
	if e.Status == http.StatusRequestEntityTooLarge {
		w.Header().Set("Connection", "close")
	}
	writeJSON(w, e.Status, errorBody{
		Schemas: []string{schemaError}, Status: strconv.Itoa(e.Status), ScimType: e.ScimType, Detail: e.Detail,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"schemas":["` + schemaError + `"],"status":"500","detail":"internal error"}`)
	}
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
