package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"

	"hrsync/api"
)

// apiError is an answer in the error shape {"error":{"code","message"}}.
type apiError struct {
	status     int
	code       string
	msg        string
	retryAfter *int
}

func (a *apiError) Error() string { return a.code + ": " + a.msg }

// Errors of the emulator's Go methods, to test with errors.Is.
var (
	ErrNotFound = errors.New("not found")     // an unknown order, line item, person, product or collection
	ErrInvalid  = errors.New("invalid input") // a request the emulator refuses
	ErrConflict = errors.New("conflict")      // an order id already in use
)

// Unwrap maps the answer's status to ErrNotFound, ErrInvalid or ErrConflict.
func (a *apiError) Unwrap() error {
	switch a.status {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusBadRequest:
		return ErrInvalid
	case http.StatusConflict:
		return ErrConflict
	}
	return nil
}

func errInvalid(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "invalid_input", msg: fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: "not_found", msg: fmt.Sprintf(format, args...)}
}

// codeFor is the error code that goes with an HTTP status (DESIGN.md's list,
// and names of our own for statuses it does not list).
func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_input"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusRequestEntityTooLarge:
		return "payload_too_large"
	case http.StatusUnprocessableEntity:
		return "not_personalizable"
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusInternalServerError:
		return "internal_error"
	case http.StatusBadGateway:
		return "bad_gateway"
	case http.StatusServiceUnavailable:
		return "unavailable"
	case http.StatusGatewayTimeout:
		return "gateway_timeout"
	}
	if status >= 500 {
		return "server_error"
	}
	return "client_error"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "encode answer: "+err.Error())
		return
	}
	writeRaw(w, status, b)
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeAPIError(w, &apiError{status: status, code: code, msg: msg})
}

func writeAPIError(w http.ResponseWriter, a *apiError) {
	var body api.Error
	body.Error.Code = a.code
	body.Error.Message = a.msg
	b, _ := json.Marshal(body) // two strings always marshal
	if a.retryAfter != nil {
		w.Header().Set("Retry-After", strconv.Itoa(*a.retryAfter))
	}
	writeRaw(w, a.status, b)
}

// paramError turns the generated wrapper's parameter binding errors into
// the JSON error shape; each names its parameter.
func paramError(w http.ResponseWriter, _ *http.Request, err error) {
	var (
		format   *api.InvalidParamFormatError
		required *api.RequiredParamError
		tooMany  *api.TooManyValuesForParamError
	)
	switch {
	case errors.As(err, &format):
		writeAPIError(w, errInvalid("%s: invalid value: %v", format.ParamName, format.Err))
	case errors.As(err, &required):
		writeAPIError(w, errInvalid("%s is required", required.ParamName))
	case errors.As(err, &tooMany):
		writeAPIError(w, errInvalid("%s: want one value, got %d", tooMany.ParamName, tooMany.Count))
	default:
		writeAPIError(w, errInvalid("%v", err))
	}
}

// readBody reads a JSON request body: 413 beyond the size limit, 400 when
// it is empty. The Content-Type is not checked: the body is read as JSON
// whatever it says (curl -d sends a form type).
func readBody(r *http.Request) ([]byte, *apiError) {
	b, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "payload_too_large",
			msg: fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)}
	}
	if err != nil {
		return nil, errInvalid("read request body: %v", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errInvalid("request body is empty: want a JSON object")
	}
	return b, nil
}

// decodeJSON decodes one JSON value into dst. Errors name the field at
// fault, prefixed with where (a path such as "people[2]", or "" for the body).
func decodeJSON(b []byte, dst any, where string) *apiError {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, where)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errInvalid("%s: unexpected data after the JSON value", orBody(where))
	}
	return nil
}

func orBody(where string) string {
	if where == "" {
		return "request body"
	}
	return where
}

func jsonError(err error, where string) *apiError {
	var (
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return errInvalid("%s: malformed JSON at byte %d: %v", orBody(where), syntax.Offset, syntax)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errInvalid("%s: malformed JSON: unexpected end", orBody(where))
	case errors.As(err, &typeErr):
		field := typeErr.Field
		switch {
		case field == "":
			field = orBody(where)
		case where != "":
			field = where + "." + field
		}
		return errInvalid("%s: want %s, got JSON %s", field, jsonKind(typeErr.Type), typeErr.Value)
	default:
		return errInvalid("%s: %v", orBody(where), err)
	}
}

// jsonKind names a Go type the way JSON does.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}
