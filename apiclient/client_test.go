package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"hrsync/api"
)

// These tests drive the client against small handlers on a real loopback
// server, for conditions where the exact answer matters; contract_test.go
// runs it against the emulator.

const (
	collUUID  = "7a4c9f0e-3b1d-4e8a-9c2f-5d6e7f8a9b0c"
	prodUUID  = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
	orderUUID = "c0ffee00-1234-4abc-8def-0123456789ab"
	companyID = "company-1"
)

// fakeSleep records the waits the client asks for and returns at once,
// unless the context is done.
type fakeSleep struct {
	mu    sync.Mutex
	waits []time.Duration
	// hook, if set, runs before returning (e.g. to cancel a context).
	hook func()
}

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	return ctx.Err()
}

func (f *fakeSleep) recorded() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// newTestClient returns a client for baseURL with fast retries, no rate
// limit and a fake sleep, after mutate adjusts its config.
func newTestClient(t *testing.T, baseURL string, mutate func(*Config)) (*Client, *fakeSleep) {
	t.Helper()
	cfg := validConfig()
	cfg.BaseURL = baseURL
	cfg.MaxAttempts = 4
	cfg.BackoffBase = time.Millisecond
	cfg.BackoffMax = 4 * time.Millisecond
	cfg.MaxRetryAfter = 10 * time.Millisecond
	cfg.RatePerSecond = math.Inf(1)
	cfg.Timeout = 5 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	fs := &fakeSleep{}
	c.sleep = fs.sleep
	t.Cleanup(c.CloseIdleConnections)
	return c, fs
}

// serve starts a loopback server whose handler sees the attempt number.
func serve(t *testing.T, h func(w http.ResponseWriter, r *http.Request, attempt int)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, int(n.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func writeAPIError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`, code, msg))
}

// dropConnection reads the request and closes the connection without answering.
func dropConnection(t *testing.T, w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

const peopleJSON = `[{"id":"p-1","firstName":"Test","lastName":"Person","email":"ext-001@example.test"}]`

func peopleRequest() api.CreatePeopleRequest {
	ext, email := "ext-001", "ext-001@example.test"
	return api.CreatePeopleRequest{CollectionId: collUUID, People: []api.InputPerson{{ExternalId: &ext, Email: &email}}}
}

// mustError asserts err is an *Error free of the token, and returns it.
func mustError(t *testing.T, err error) *Error {
	t.Helper()
	if err == nil {
		t.Fatal("got no error")
	}
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %T is not an *apiclient.Error", err)
	}
	assertNoSecret(t, err.Error())
	assertNoSecret(t, fmt.Sprintf("%+v %#v", err, err))
	return e
}

func TestRequestHeaders(t *testing.T) {
	type seen struct{ method, path, query, auth, ua, accept, idem, lang string }
	var got seen
	srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		got = seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("User-Agent"),
			r.Header.Get("Accept"), r.Header.Get("Idempotency-Key"), r.Header.Get("Accept-Language")}
		switch {
		case strings.HasSuffix(r.URL.Path, "/people"):
			writeJSON(w, http.StatusCreated, peopleJSON)
		case strings.Contains(r.URL.Path, "/orders/"):
			writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`"}`)
		default:
			writeJSON(w, http.StatusOK, `{}`)
		}
	})
	c, _ := newTestClient(t, srv.URL+"/prefix", nil)
	ctx := context.Background()

	t.Run("create people", func(t *testing.T) {
		people, err := c.CreatePeople(ctx, peopleRequest(), "key-123")
		if err != nil {
			t.Fatalf("CreatePeople: %v", err)
		}
		if len(people) != 1 || people[0].Id != "p-1" {
			t.Errorf("people = %+v", people)
		}
		want := seen{http.MethodPost, "/prefix/api/ext/v1/people", "", "Bearer " + testToken, "hrsync/1.2.3", "application/json", "key-123", ""}
		if got != want {
			t.Errorf("request differs from the expected one (path %s, ua %s, idem %s)", got.path, got.ua, got.idem)
		}
	})
	t.Run("get product", func(t *testing.T) {
		_, err := c.GetProduct(ctx, collUUID, prodUUID, ProductOptions{AcceptLanguage: "fr-CA, fr;q=0.8", CountryCode: "CA"})
		// {} lacks the product's required fields but decodes; the contract tests check real products.
		if err != nil {
			t.Fatalf("GetProduct: %v", err)
		}
		if got.path != "/prefix/api/ext/v1/collection/"+collUUID+"/product/"+prodUUID || got.query != "countryCode=CA" || got.lang != "fr-CA, fr;q=0.8" {
			t.Errorf("path %s query %s language %s", got.path, got.query, got.lang)
		}
		if got.idem != "" || got.auth != "Bearer "+testToken {
			t.Error("read carries an idempotency key or lacks the bearer token")
		}
	})
	t.Run("get order status", func(t *testing.T) {
		if _, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if got.method != http.MethodGet || got.path != "/prefix/api/ext/v1/collection/"+collUUID+"/orders/"+orderUUID || got.query != "companyId="+companyID {
			t.Errorf("%s %s?%s", got.method, got.path, got.query)
		}
	})
}

func TestInvalidArguments(t *testing.T) {
	srv, hits := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, http.StatusOK, `{}`) })
	c, _ := newTestClient(t, srv.URL, nil)
	ctx := context.Background()
	day := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		call func() error
	}{
		{"create without key", func() error { _, err := c.CreatePeople(ctx, peopleRequest(), ""); return err }},
		{"create with a key holding a newline", func() error { _, err := c.CreatePeople(ctx, peopleRequest(), "a\nb"); return err }},
		{"create without collection", func() error {
			r := peopleRequest()
			r.CollectionId = ""
			_, err := c.CreatePeople(ctx, r, "k")
			return err
		}},
		{"create without people", func() error {
			_, err := c.CreatePeople(ctx, api.CreatePeopleRequest{CollectionId: collUUID}, "k")
			return err
		}},
		{"personalize without company", func() error { _, err := c.Personalize(ctx, collUUID, api.PersonalizeRequest{}); return err }},
		{"personalize without collection", func() error {
			_, err := c.Personalize(ctx, "", api.PersonalizeRequest{CompanyId: companyID})
			return err
		}},
		{"product with a non-UUID collection", func() error { _, err := c.GetProduct(ctx, "coll", prodUUID, ProductOptions{}); return err }},
		{"product with a non-UUID product", func() error { _, err := c.GetProduct(ctx, collUUID, "p", ProductOptions{}); return err }},
		{"order status with a non-UUID order", func() error { _, err := c.GetOrderStatus(ctx, collUUID, "o", companyID); return err }},
		{"order status without company", func() error { _, err := c.GetOrderStatus(ctx, collUUID, orderUUID, ""); return err }},
		{"orders with reversed days", func() error {
			_, err := c.ListOrders(ctx, collUUID, companyID, nil, day, day.AddDate(0, 0, -1))
			return err
		}},
		{"orders without collection", func() error { _, err := c.ListOrders(ctx, "", companyID, nil, day, day); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustError(t, tt.call())
			if !errors.Is(e, ErrInvalidRequest) || e.Outcome != OutcomeNotApplied || e.Retryable || e.Attempts != 0 {
				t.Errorf("error = %v (retryable %t, attempts %d)", e, e.Retryable, e.Attempts)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("invalid calls sent %d requests", n)
	}
}

func TestReadRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("429 with Retry-After then success", func(t *testing.T) {
		srv, hits := serve(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "2")
				writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
				return
			}
			writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`)
		})
		c, fs := newTestClient(t, srv.URL, func(c *Config) { c.MaxRetryAfter = 5 * time.Second })
		st, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID)
		if err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if st.Status != api.OrderStatusValue("Placed") || hits.Load() != 2 {
			t.Errorf("status %s after %d requests", st.Status, hits.Load())
		}
		if w := fs.recorded(); len(w) != 1 || w[0] != 2*time.Second {
			t.Errorf("waits = %v, want the 2s the server asked for", w)
		}
	})
	t.Run("Retry-After is capped", func(t *testing.T) {
		srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "3600")
				writeAPIError(w, http.StatusServiceUnavailable, "unavailable", "later")
				return
			}
			writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`)
		})
		c, fs := newTestClient(t, srv.URL, func(c *Config) { c.MaxRetryAfter = 7 * time.Millisecond })
		if _, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if w := fs.recorded(); len(w) != 1 || w[0] != 7*time.Millisecond {
			t.Errorf("waits = %v, want the 7ms cap", w)
		}
	})
	t.Run("Retry-After as an HTTP date", func(t *testing.T) {
		at := time.Date(2025, 6, 1, 10, 0, 30, 0, time.UTC)
		srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", at.Format(http.TimeFormat))
				writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
				return
			}
			writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`)
		})
		c, fs := newTestClient(t, srv.URL, func(c *Config) { c.MaxRetryAfter = time.Minute })
		c.now = func() time.Time { return at.Add(-20 * time.Second) }
		if _, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if w := fs.recorded(); len(w) != 1 || w[0] != 20*time.Second {
			t.Errorf("waits = %v, want 20s", w)
		}
	})
	t.Run("garbage Retry-After falls back to backoff", func(t *testing.T) {
		srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After", "whenever")
				writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
				return
			}
			writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`)
		})
		c, fs := newTestClient(t, srv.URL, nil)
		if _, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if w := fs.recorded(); len(w) != 1 || w[0] < 0 || w[0] >= time.Millisecond {
			t.Errorf("waits = %v, want one backoff wait in [0, 1ms)", w)
		}
	})
	t.Run("5xx retried up to the attempt bound", func(t *testing.T) {
		srv, hits := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeAPIError(w, http.StatusInternalServerError, "internal", "boom")
		})
		c, fs := newTestClient(t, srv.URL, nil)
		_, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID)
		e := mustError(t, err)
		if e.Status != 500 || e.Code != "internal" || e.Message != "boom" || e.Attempts != 4 || !e.Retryable {
			t.Errorf("error = %v", e)
		}
		if hits.Load() != 4 || len(fs.recorded()) != 3 {
			t.Errorf("%d requests, %d waits; want 4 and 3", hits.Load(), len(fs.recorded()))
		}
		for i, w := range fs.recorded() {
			if ceiling := min(4*time.Millisecond, time.Millisecond<<i); w < 0 || w >= ceiling {
				t.Errorf("wait %d = %s, want in [0, %s)", i+1, w, ceiling)
			}
		}
	})
	t.Run("dropped connection retried", func(t *testing.T) {
		srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				dropConnection(t, w, r)
				return
			}
			writeJSON(w, http.StatusOK, `{"data":[],"count":0}`)
		})
		c, _ := newTestClient(t, srv.URL, nil)
		day := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
		if _, err := c.ListOrders(ctx, collUUID, companyID, nil, day, day); err != nil {
			t.Fatalf("ListOrders: %v", err)
		}
		if hits.Load() != 2 {
			t.Errorf("%d requests, want 2", hits.Load())
		}
	})
	t.Run("timeout retried", func(t *testing.T) {
		srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				<-r.Context().Done() // never answers; the client gives up
				return
			}
			writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Shipped","lineItems":[]}`)
		})
		c, _ := newTestClient(t, srv.URL, func(c *Config) { c.Timeout = 300 * time.Millisecond })
		if _, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("GetOrderStatus: %v", err)
		}
		if hits.Load() != 2 {
			t.Errorf("%d requests, want 2", hits.Load())
		}
	})
	t.Run("4xx not retried", func(t *testing.T) {
		srv, hits := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeAPIError(w, http.StatusNotFound, "not_found", "no such order")
		})
		c, _ := newTestClient(t, srv.URL, nil)
		_, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID)
		e := mustError(t, err)
		if e.Status != 404 || e.Code != "not_found" || e.Retryable || hits.Load() != 1 {
			t.Errorf("error = %v after %d requests", e, hits.Load())
		}
	})
}

func TestWriteRetries(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		handler     func(t *testing.T, w http.ResponseWriter, r *http.Request, n int)
		timeout     time.Duration
		wantHits    int32
		wantErr     bool
		wantStatus  int
		wantOutcome Outcome
		wantIs      error
	}{
		{
			name: "429 then success",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, n int) {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
					return
				}
				writeJSON(w, http.StatusCreated, peopleJSON)
			},
			wantHits: 2,
		},
		{
			name: "503 with Retry-After then success",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, n int) {
				if n == 1 {
					w.Header().Set("Retry-After", "0")
					writeAPIError(w, http.StatusServiceUnavailable, "unavailable", "maintenance")
					return
				}
				writeJSON(w, http.StatusOK, peopleJSON) // 200 is accepted as well as 201
			},
			wantHits: 2,
		},
		{
			name: "503 without Retry-After not retried",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ int) {
				writeAPIError(w, http.StatusServiceUnavailable, "unavailable", "down")
			},
			wantHits: 1, wantErr: true, wantStatus: 503, wantOutcome: OutcomeUnknown,
		},
		{
			name: "500 not retried",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ int) {
				writeAPIError(w, http.StatusInternalServerError, "internal", "boom")
			},
			wantHits: 1, wantErr: true, wantStatus: 500, wantOutcome: OutcomeUnknown,
		},
		{
			name:     "dropped connection after sending not retried",
			handler:  func(t *testing.T, w http.ResponseWriter, r *http.Request, _ int) { dropConnection(t, w, r) },
			wantHits: 1, wantErr: true, wantOutcome: OutcomeUnknown,
		},
		{
			name: "timeout after sending not retried",
			handler: func(_ *testing.T, _ http.ResponseWriter, r *http.Request, _ int) {
				// Read the body first: the server notices the client leaving
				// only once the body is consumed.
				_, _ = io.ReadAll(r.Body)
				<-r.Context().Done()
			},
			timeout:  300 * time.Millisecond,
			wantHits: 1, wantErr: true, wantOutcome: OutcomeUnknown, wantIs: context.DeadlineExceeded,
		},
		{
			name: "429 exhausted is not applied",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header().Set("Retry-After", "1")
				writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
			},
			wantHits: 4, wantErr: true, wantStatus: 429, wantOutcome: OutcomeNotApplied,
		},
		{
			name: "422 mapped",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ int) {
				writeAPIError(w, http.StatusUnprocessableEntity, "not_personalizable", "collection cannot be personalized")
			},
			wantHits: 1, wantErr: true, wantStatus: 422, wantOutcome: OutcomeNotApplied,
		},
		{
			name: "unexpected 2xx",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ int) {
				writeJSON(w, http.StatusAccepted, `{}`)
			},
			wantHits: 1, wantErr: true, wantStatus: 202, wantOutcome: OutcomeUnknown, wantIs: ErrUnexpectedStatus,
		},
		{
			name: "redirect not followed",
			handler: func(_ *testing.T, w http.ResponseWriter, r *http.Request, _ int) {
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			},
			wantHits: 1, wantErr: true, wantStatus: 302, wantOutcome: OutcomeUnknown, wantIs: ErrUnexpectedStatus,
		},
		{
			name: "success with an undecodable body",
			handler: func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ int) {
				writeJSON(w, http.StatusCreated, `{"not":"a list"}`)
			},
			wantHits: 1, wantErr: true, wantStatus: 201, wantOutcome: OutcomeApplied, wantIs: ErrBadResponse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.handler(t, w, r, n) })
			c, _ := newTestClient(t, srv.URL, func(c *Config) {
				if tt.timeout != 0 {
					c.Timeout = tt.timeout
				}
			})
			people, err := c.CreatePeople(ctx, peopleRequest(), "key-1")
			if got := hits.Load(); got != tt.wantHits {
				t.Errorf("%d requests, want %d", got, tt.wantHits)
			}
			if !tt.wantErr {
				if err != nil || len(people) != 1 {
					t.Fatalf("CreatePeople = %v, %v", people, err)
				}
				return
			}
			e := mustError(t, err)
			if e.Status != tt.wantStatus || e.Outcome != tt.wantOutcome || e.Op != OpCreatePeople {
				t.Errorf("error = %v; want status %d, %s", e, tt.wantStatus, tt.wantOutcome)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantIs)
			}
			if IsOutcomeUnknown(err) != (tt.wantOutcome == OutcomeUnknown) || IsNotApplied(err) != (tt.wantOutcome == OutcomeNotApplied) {
				t.Errorf("helpers disagree with outcome %s", e.Outcome)
			}
		})
	}
}

// TestWriteNotReplayedOnReusedConnection guards against net/http's own
// replay: it resends a request carrying an Idempotency-Key when a reused
// keep-alive connection drops before the answer, which would apply a
// create twice on a platform that ignores the key.
func TestWriteNotReplayedOnReusedConnection(t *testing.T) {
	ctx := context.Background()
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 2 {
			dropConnection(t, w, r)
			return
		}
		writeJSON(w, http.StatusCreated, peopleJSON)
	})
	c, _ := newTestClient(t, srv.URL, nil)
	if _, err := c.CreatePeople(ctx, peopleRequest(), "key-1"); err != nil {
		t.Fatalf("first CreatePeople: %v", err)
	}
	var reused atomic.Bool
	tctx := withGotConn(ctx, func(r bool) { reused.Store(r) })
	_, err := c.CreatePeople(tctx, peopleRequest(), "key-2")
	e := mustError(t, err)
	if !reused.Load() {
		t.Fatal("the second request did not reuse the connection; the test proves nothing")
	}
	if e.Outcome != OutcomeUnknown || e.Attempts != 1 {
		t.Errorf("error = %v", e)
	}
	if got := hits.Load(); got != 2 {
		t.Errorf("server saw %d requests, want 2: the dropped create was replayed", got)
	}
}

func TestConnectionRefused(t *testing.T) {
	// A port that was just listening and is now closed refuses connections.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	c, fs := newTestClient(t, "http://"+addr, nil)
	ctx := context.Background()
	t.Run("write retried, then not applied", func(t *testing.T) {
		_, err := c.CreatePeople(ctx, peopleRequest(), "key-1")
		e := mustError(t, err)
		if e.Outcome != OutcomeNotApplied || !e.Retryable || e.Attempts != 4 || e.Status != 0 {
			t.Errorf("error = %v (attempts %d)", e, e.Attempts)
		}
		if !strings.Contains(err.Error(), "not applied") || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("error %q does not say the request was refused and not applied", err)
		}
		if !IsNotApplied(err) || IsOutcomeUnknown(err) {
			t.Error("helpers disagree")
		}
		if len(fs.recorded()) != 3 {
			t.Errorf("waits = %v, want 3", fs.recorded())
		}
	})
	t.Run("read retried", func(t *testing.T) {
		_, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID)
		if e := mustError(t, err); e.Attempts != 4 {
			t.Errorf("attempts = %d", e.Attempts)
		}
	})
}

func TestRetryBounds(t *testing.T) {
	ctx := context.Background()
	always429 := func(ra string) func(w http.ResponseWriter, _ *http.Request, _ int) {
		return func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.Header().Set("Retry-After", ra)
			writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down")
		}
	}
	t.Run("a wait beyond the retry budget is not started", func(t *testing.T) {
		srv, hits := serve(t, always429("120"))
		c, fs := newTestClient(t, srv.URL, func(c *Config) { c.MaxRetryAfter = time.Hour; c.RetryBudget = time.Minute })
		_, err := c.GetOrderStatus(ctx, collUUID, orderUUID, companyID)
		e := mustError(t, err)
		if hits.Load() != 1 || len(fs.recorded()) != 0 || e.RetryAfter != 2*time.Minute || !e.Retryable {
			t.Errorf("%d requests, waits %v, error %v (retry after %s)", hits.Load(), fs.recorded(), e, e.RetryAfter)
		}
	})
	t.Run("a wait beyond the context deadline is not started", func(t *testing.T) {
		srv, hits := serve(t, always429("30"))
		c, fs := newTestClient(t, srv.URL, func(c *Config) { c.MaxRetryAfter = time.Minute })
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := c.GetOrderStatus(dctx, collUUID, orderUUID, companyID)
		_ = mustError(t, err)
		if hits.Load() != 1 || len(fs.recorded()) != 0 {
			t.Errorf("%d requests, waits %v", hits.Load(), fs.recorded())
		}
	})
	t.Run("cancellation during a wait stops the call", func(t *testing.T) {
		srv, hits := serve(t, always429("1"))
		c, fs := newTestClient(t, srv.URL, nil)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		fs.hook = cancel
		_, err := c.GetOrderStatus(cctx, collUUID, orderUUID, companyID)
		e := mustError(t, err)
		if !errors.Is(err, context.Canceled) || e.Status != 429 || hits.Load() != 1 {
			t.Errorf("error = %v after %d requests", e, hits.Load())
		}
	})
	t.Run("a done context sends nothing", func(t *testing.T) {
		srv, hits := serve(t, always429("1"))
		c, _ := newTestClient(t, srv.URL, nil)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := c.CreatePeople(cctx, peopleRequest(), "k")
		e := mustError(t, err)
		if !errors.Is(err, context.Canceled) || e.Outcome != OutcomeNotApplied || hits.Load() != 0 {
			t.Errorf("error = %v after %d requests", e, hits.Load())
		}
	})
}

func TestRateLimit(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`)
	})
	var mu sync.Mutex
	var waits []time.Duration
	c, fs := newTestClient(t, srv.URL, func(c *Config) {
		c.RatePerSecond = 1
		c.Burst = 1
		c.Observer = ObserverFuncs{RateLimitWait: func(op Operation, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if op != OpGetOrderStatus {
				t.Errorf("op = %s", op)
			}
			waits = append(waits, d)
		}}
	})
	for i := range 3 {
		if _, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// The fake sleep returns at once, so the reservations pile up: the second
	// call is owed about one second and the third about two.
	if len(waits) != 2 || waits[0] <= 0 || waits[0] > time.Second || waits[1] <= waits[0] || waits[1] > 2*time.Second {
		t.Errorf("rate-limit waits = %v", waits)
	}
	if got := fs.recorded(); len(got) != 2 {
		t.Errorf("slept %v", got)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	const limit, calls = 2, 6
	var inFlight, peak atomic.Int32
	arrived := make(chan struct{}, calls)
	release := make(chan struct{})
	srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		inFlight.Add(-1)
		writeJSON(w, http.StatusOK, `{"id":"`+orderUUID+`","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`)
	})
	c, _ := newTestClient(t, srv.URL, func(c *Config) { c.MaxConcurrency = limit })
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			_, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID)
			errs <- err
		})
	}
	for range limit {
		<-arrived
	}
	if c.sem.TryAcquire(1) {
		c.sem.Release(1)
		t.Error("a slot is free while two calls are in flight")
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call: %v", err)
		}
	}
	if p := peak.Load(); p > limit {
		t.Errorf("%d requests in flight at once, limit %d", p, limit)
	}
}

func TestObserverAndLogging(t *testing.T) {
	srv, _ := serve(t, func(w http.ResponseWriter, _ *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			writeAPIError(w, http.StatusTooManyRequests, "rate_limited", "slow down ext-001@example.test")
			return
		}
		writeJSON(w, http.StatusCreated, peopleJSON)
	})
	type callEvent struct {
		op     Operation
		status int
		err    bool
	}
	var calls []callEvent
	var retries []int
	core, logs := observer.New(zap.DebugLevel)
	c, _ := newTestClient(t, srv.URL, func(c *Config) {
		c.Logger = zap.New(core)
		c.Observer = ObserverFuncs{
			Call: func(op Operation, status int, took time.Duration, err error) {
				if took < 0 {
					t.Errorf("negative duration %s", took)
				}
				calls = append(calls, callEvent{op, status, err != nil})
			},
			Retry: func(op Operation, attempt int, _ time.Duration) { retries = append(retries, attempt) },
		}
	})
	if _, err := c.CreatePeople(context.Background(), peopleRequest(), "key-1"); err != nil {
		t.Fatalf("CreatePeople: %v", err)
	}
	t.Run("observer", func(t *testing.T) {
		want := []callEvent{{OpCreatePeople, 429, true}, {OpCreatePeople, 201, false}}
		if fmt.Sprint(calls) != fmt.Sprint(want) || fmt.Sprint(retries) != "[2]" {
			t.Errorf("calls %v retries %v", calls, retries)
		}
	})
	t.Run("log lines", func(t *testing.T) {
		entries := logs.FilterMessage("api call").All()
		if len(entries) != 2 {
			t.Fatalf("%d api call lines, want 2", len(entries))
		}
		first := entries[0].ContextMap()
		if first["op"] != string(OpCreatePeople) || first["status"] != int64(429) || first["attempt"] != int64(1) ||
			first["code"] != "rate_limited" || first["outcome"] != "not applied" {
			t.Errorf("first line fields = %v", first)
		}
		if _, ok := first["duration"]; !ok {
			t.Error("no duration")
		}
		if logs.FilterMessage("api retry").Len() != 1 {
			t.Error("no retry line")
		}
	})
	t.Run("no token or personal data", func(t *testing.T) {
		for _, e := range logs.All() {
			line := fmt.Sprint(e.Message, e.ContextMap())
			assertNoSecret(t, line)
			if strings.Contains(line, "example.test") || strings.Contains(line, "Person") {
				t.Errorf("log line %q holds personal data", e.Message)
			}
		}
	})
}

// withGotConn reports whether the connection of a request was reused.
func withGotConn(ctx context.Context, f func(reused bool)) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { f(info.Reused) },
	})
}

// getBodySetter mimics a transport wrapper that makes requests replayable.
type getBodySetter struct{ base http.RoundTripper }

func (g getBodySetter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.GetBody == nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(b))), nil }
		r.Body, _ = r.GetBody()
	}
	return g.base.RoundTrip(r)
}

func TestWarnsWhenTransportReplaysWrite(t *testing.T) {
	srv, hits := serve(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 2 {
			dropConnection(t, w, r)
			return
		}
		writeJSON(w, http.StatusCreated, peopleJSON)
	})
	core, logs := observer.New(zap.WarnLevel)
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	c, _ := newTestClient(t, srv.URL, func(c *Config) {
		c.Logger = zap.New(core)
		c.HTTPClient = &http.Client{Transport: getBodySetter{base}}
	})
	ctx := context.Background()
	for i := range 2 {
		if _, err := c.CreatePeople(ctx, peopleRequest(), fmt.Sprintf("key-%d", i)); err != nil {
			t.Fatalf("CreatePeople %d: %v", i, err)
		}
	}
	if hits.Load() != 3 {
		t.Fatalf("%d requests; the wrapper did not make net/http replay, so the test proves nothing", hits.Load())
	}
	if n := logs.FilterMessageSnippet("more than once").Len(); n != 1 {
		t.Errorf("%d warnings about a resent write, want 1", n)
	}
}

func TestLimitWaitsRespectContext(t *testing.T) {
	const statusJSON = `{"id":"` + orderUUID + `","createdAt":"2025-01-02T03:04:05Z","status":"Placed","lineItems":[]}`
	t.Run("waiting for a concurrency slot", func(t *testing.T) {
		arrived, release := make(chan struct{}), make(chan struct{})
		srv, hits := serve(t, func(w http.ResponseWriter, _ *http.Request, n int) {
			if n == 1 {
				close(arrived)
				<-release
			}
			writeJSON(w, http.StatusOK, statusJSON)
		})
		c, _ := newTestClient(t, srv.URL, func(c *Config) { c.MaxConcurrency = 1 })
		done := make(chan error, 1)
		go func() {
			_, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID)
			done <- err
		}()
		<-arrived // the only slot is taken
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := c.CreatePeople(ctx, peopleRequest(), "key-1")
		e := mustError(t, err)
		if !errors.Is(err, context.DeadlineExceeded) || e.Outcome != OutcomeNotApplied || hits.Load() != 1 {
			t.Errorf("error %v after %d requests", e, hits.Load())
		}
		close(release)
		if err := <-done; err != nil {
			t.Errorf("first call: %v", err)
		}
	})
	t.Run("waiting for the rate limit", func(t *testing.T) {
		srv, hits := serve(t, func(w http.ResponseWriter, _ *http.Request, _ int) { writeJSON(w, http.StatusOK, statusJSON) })
		c, _ := newTestClient(t, srv.URL, func(c *Config) { c.RatePerSecond = 0.001; c.Burst = 1 })
		c.sleep = sleepCtx // really wait, so that only the context can end the wait
		if _, err := c.GetOrderStatus(context.Background(), collUUID, orderUUID, companyID); err != nil {
			t.Fatalf("first call: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := c.CreatePeople(ctx, peopleRequest(), "key-1") // owed about 1000s
		e := mustError(t, err)
		if !errors.Is(err, context.DeadlineExceeded) || e.Outcome != OutcomeNotApplied || hits.Load() != 1 {
			t.Errorf("error %v after %d requests", e, hits.Load())
		}
	})
}
