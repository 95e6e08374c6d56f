// Package scim is hrsync's SCIM 2.0 service provider (RFC 7643, RFC 7644): the endpoint that
// identity providers such as Okta and Microsoft Entra ID provision users to. It serves discovery
// (/ServiceProviderConfig, /ResourceTypes, /Schemas) and /Users (create, read, list with filters and
// pages, replace, patch, delete) for several tenants, each selected by its own bearer token, and
// writes through a directory.Directory, which stores each change with its audit entry before the
// answer goes out. Groups are not supported. It accepts the forms Entra and Okta really send
// (capitalised PATCH ops, booleans as strings, value-path filters, PATCH without path).
package scim

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"hrsync/sources/scim/directory"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultRate         = rate.Limit(20)
	DefaultBurst        = 40
	// MaxResults is the most users one list answer holds, and the count when none is asked.
	MaxResults = 200
)

// Options configure a Handler.
type Options struct {
	// Directory stores the users; required.
	Directory directory.Directory
	// Tenants maps each tenant's name to its token; required, at least one.
	Tenants map[string]TokenSource
	// Logger gets one line per request (tenant, method, path template, status, id), never a
	// person's data; nil means no logs.
	Logger *zap.Logger
	// MaxBodyBytes bounds a request body (413 beyond); 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Rate and Burst limit each tenant's requests (429 with Retry-After beyond); 0 means the defaults.
	Rate  rate.Limit
	Burst int
	// BaseURL is the endpoint's public address ending in /scim/v2, used in meta.location; empty
	// means the request's own host, over https unless the connection is plain HTTP.
	BaseURL string
	// OnWrite, when not nil, is told the tenant of every write (POST, PUT, PATCH, DELETE of a
	// user) the directory stored, after its answer is written. It is called on the request's
	// goroutine, so it must return at once (the daemon only arms a timer: answers never wait for
	// the platform).
	OnWrite func(tenant string)
}

// Handler serves SCIM 2.0 under /scim/v2. Make one with New.
type Handler struct {
	dir         directory.Directory
	tenants     map[string]TokenSource
	tenantNames []string
	limiters    map[string]*rate.Limiter
	log         *zap.Logger
	maxBody     int64
	baseURL     string
	onWrite     func(tenant string)
	mux         *http.ServeMux
}

// New checks the options and returns a Handler.
func New(opts Options) (*Handler, error) {
	if opts.Directory == nil {
		return nil, errors.New("scim: a directory is required")
	}
	if len(opts.Tenants) == 0 {
		return nil, errors.New("scim: at least one tenant token is required")
	}
	h := &Handler{
		dir: opts.Directory, tenants: opts.Tenants, tenantNames: sortedNames(opts.Tenants),
		limiters: map[string]*rate.Limiter{}, log: opts.Logger, maxBody: opts.MaxBodyBytes, baseURL: opts.BaseURL,
		onWrite: opts.OnWrite,
	}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	limit, burst := opts.Rate, opts.Burst
	if limit <= 0 {
		limit = DefaultRate
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	for _, name := range h.tenantNames {
		h.limiters[name] = rate.NewLimiter(limit, burst)
	}
	h.mux = h.routes()
	return h, nil
}

func (h *Handler) routes() *http.ServeMux {
	mux := http.NewServeMux()
	const base = "/scim/v2"
	mux.HandleFunc("GET "+base+"/ServiceProviderConfig", h.serviceProviderConfig)
	mux.HandleFunc("GET "+base+"/ResourceTypes", h.resourceTypes)
	mux.HandleFunc("GET "+base+"/ResourceTypes/{name}", h.resourceType)
	mux.HandleFunc("GET "+base+"/Schemas", h.schemas)
	mux.HandleFunc("GET "+base+"/Schemas/{urn}", h.schema)
	mux.HandleFunc("GET "+base+"/Users", h.listUsers)
	mux.HandleFunc("POST "+base+"/Users", h.createUser)
	mux.HandleFunc("GET "+base+"/Users/{id}", h.getUser)
	mux.HandleFunc("PUT "+base+"/Users/{id}", h.replaceUser)
	mux.HandleFunc("PATCH "+base+"/Users/{id}", h.patchUser)
	mux.HandleFunc("DELETE "+base+"/Users/{id}", h.deleteUser)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, newError(http.StatusNotFound, "", "no such endpoint (only Users are supported, not Groups)"))
	})
	return mux
}

type tenantKey struct{}

func tenantOf(ctx context.Context) string { t, _ := ctx.Value(tenantKey{}).(string); return t }

// statusWriter remembers the status written, for the log line.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// ServeHTTP authenticates the tenant, applies its rate limit and the body bound, and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	tenant, ok := h.authenticate(r)
	switch {
	case !ok:
		sw.Header().Set("WWW-Authenticate", `Bearer realm="hrsync scim"`)
		writeError(sw, newError(http.StatusUnauthorized, "", "missing or unknown bearer token"))
	case !h.limiters[tenant].Allow():
		sw.Header().Set("Retry-After", strconv.Itoa(h.retryAfter(tenant)))
		writeError(sw, newError(http.StatusTooManyRequests, "", "too many requests"))
	default:
		r = r.WithContext(context.WithValue(r.Context(), tenantKey{}, tenant))
		r.Body = http.MaxBytesReader(sw, r.Body, h.maxBody)
		h.mux.ServeHTTP(sw, r)
		if h.onWrite != nil && isWrite(r.Method) && sw.status >= 200 && sw.status < 300 {
			h.onWrite(tenant)
		}
	}
	pattern := r.Pattern
	if pattern == "" {
		_, pattern = h.mux.Handler(r)
	}
	h.log.Info("scim request",
		zap.String("tenant", tenant), zap.String("method", r.Method), zap.String("path", pattern),
		zap.Int("status", sw.status), zap.String("id", r.PathValue("id")),
		zap.Duration("duration", time.Since(start)))
}

// isWrite tells whether a request of this method changes a user (a successful one was stored).
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// retryAfter is how many whole seconds until the tenant's limiter has a token again (at least 1).
func (h *Handler) retryAfter(tenant string) int {
	lim := h.limiters[tenant]
	secs := int(1/float64(lim.Limit())) + 1
	return max(secs, 1)
}

// base is the public address of the endpoint, for meta.location.
func (h *Handler) base(r *http.Request) string {
	if h.baseURL != "" {
		return h.baseURL
	}
	scheme := "https"
	if r.TLS == nil {
		scheme = "http"
	}
	return scheme + "://" + r.Host + "/scim/v2"
}
