// Package contract checks HTTP requests and responses against the platform's
// contract, api/openapi.yaml, with kin-openapi. Tests wrap the client's
// transport and the emulator's handler with it, so that every request hrsync
// sends and every response the emulator returns in a test is validated.
package contract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"hrsync/api"
)

// Validator validates exchanges against the contract.
type Validator struct {
	router routers.Router
}

// New loads the embedded contract and prepares a router over its paths.
// Server URLs are ignored: only paths are matched, so any host and port works.
func New() (*Validator, error) {
	doc, err := openapi3.NewLoader().LoadFromData(api.SpecYAML)
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("contract is invalid: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("build router: %w", err)
	}
	return &Validator{router: router}, nil
}

// ErrNotInContract reports a request whose method and path the contract does not define.
var ErrNotInContract = errors.New("operation not in the contract")

// InContract tells whether the request's method and path belong to the contract
// (the emulator's own /_emulator/ endpoints do not).
func (v *Validator) InContract(r *http.Request) bool {
	_, _, err := v.findRoute(r)
	return err == nil
}

// findRoute matches the request's method and path only, whatever its host.
func (v *Validator) findRoute(r *http.Request) (*routers.Route, map[string]string, error) {
	local := *r
	u := *r.URL
	u.Scheme, u.Host = "", ""
	local.URL = &u
	local.Host = ""
	return v.router.FindRoute(&local)
}

// ValidateRequest checks one request against the contract. The request body
// is read and restored, so the request can still be sent or served.
func (v *Validator) ValidateRequest(ctx context.Context, r *http.Request) (*openapi3filter.RequestValidationInput, error) {
	route, pathParams, err := v.findRoute(r)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, ErrNotInContract)
	}
	defer func(getBody func() (io.ReadCloser, error)) { r.GetBody = getBody }(r.GetBody) // kin-openapi sets GetBody, which lets net/http replay a POST
	body, err := snapshot(&r.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			// Authentication is the server's business; the contract only names the scheme.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			MultiError:         true,
		},
	}
	err = openapi3filter.ValidateRequest(ctx, in)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return in, fmt.Errorf("request %s %s breaks the contract: %w", r.Method, r.URL.Path, err)
	}
	return in, nil
}

// ValidateResponse checks one response to a request already matched by
// ValidateRequest. The response body is read and restored.
func (v *Validator) ValidateResponse(ctx context.Context, in *openapi3filter.RequestValidationInput, status int, header http.Header, body []byte) error {
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true},
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return fmt.Errorf("response %d to %s %s breaks the contract: %w", status, in.Request.Method, in.Request.URL.Path, err)
	}
	return nil
}

// Transport returns a RoundTripper that validates each request before sending
// it and each response after receiving it, reporting every violation to
// report. Requests outside the contract (the emulator's own endpoints) pass
// unchecked.
func (v *Validator) Transport(base http.RoundTripper, report func(error)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if !v.InContract(r) {
			return base.RoundTrip(r)
		}
		in, err := v.ValidateRequest(r.Context(), r)
		if err != nil {
			report(err)
		}
		resp, err := base.RoundTrip(r)
		if err != nil || in == nil {
			return resp, err
		}
		body, rerr := snapshot(&resp.Body)
		if rerr != nil {
			// The body could not be read (a dropped connection): the caller sees the same error.
			resp.Body = io.NopCloser(errReader{rerr})
			return resp, nil //nolint:nilerr // the read error reaches the caller through the body
		}
		if verr := v.ValidateResponse(r.Context(), in, resp.StatusCode, resp.Header, body); verr != nil {
			report(verr)
		}
		return resp, nil
	})
}

// Middleware returns a handler that validates each request it serves and the
// response next writes, reporting every violation to report. Requests outside
// the contract pass unchecked. Invalid requests are still served, so that
// tests can check the server's own answer to them.
func (v *Validator) Middleware(next http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !v.InContract(r) {
			next.ServeHTTP(w, r)
			return
		}
		in, reqErr := v.ValidateRequest(r.Context(), r)
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if in == nil || rec.hijacked {
			return
		}
		if reqErr != nil && rec.status < 400 {
			report(fmt.Errorf("server accepted an invalid request: %w", reqErr))
		}
		if err := v.ValidateResponse(r.Context(), in, rec.status, rec.Header(), rec.body.Bytes()); err != nil {
			report(err)
		}
	})
}

func snapshot(body *io.ReadCloser) ([]byte, error) {
	if *body == nil || *body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(*body)
	_ = (*body).Close()
	*body = io.NopCloser(bytes.NewReader(b))
	return b, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type recorder struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	hijacked bool
}

// Hijack lets a handler take the connection over (the emulator drops
// connections that way); a hijacked exchange has no response to validate.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("response writer cannot be hijacked")
	}
	r.hijacked = true
	return hj.Hijack()
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Flush passes flushes through, so that streaming handlers keep working.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
