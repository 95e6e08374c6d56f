package scim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
)

// TokenSource gives a tenant's current bearer token.
type TokenSource interface {
	Token(ctx context.Context) ([]byte, error)
}

// FileToken is a token kept in a file (a mounted Kubernetes secret, say), read at every request so a
// rotated token takes effect without a restart. Surrounding white space is ignored.
type FileToken string

// Token implements TokenSource.
func (f FileToken) Token(ctx context.Context) ([]byte, error) {
	b, err := os.ReadFile(string(f)) //nolint:gosec // the operator names the token file to read
	if err != nil {
		return nil, fmt.Errorf("read scim token file: %w", err)
	}
	return bytes.TrimSpace(b), nil
}

// StaticToken is a token held in memory, for tests and for tokens read elsewhere.
type StaticToken string

// Token implements TokenSource.
func (s StaticToken) Token(context.Context) ([]byte, error) { return []byte(s), nil }

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) []byte {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	return []byte(strings.TrimSpace(token))
}

// authenticate returns the tenant whose token the request presents. It compares the presented
// token's digest with every tenant's, always all of them and in constant time, so the answer time
// says nothing about which tenant or how much of a token matched. A tenant whose token cannot be
// read, or is empty, matches nothing; a token two tenants share selects neither.
func (h *Handler) authenticate(r *http.Request) (string, bool) {
	presented := bearer(r)
	if len(presented) == 0 {
		return "", false
	}
	want := sha256.Sum256(presented)
	matched, count := -1, 0
	for i, name := range h.tenantNames {
		tok, err := h.tenants[name].Token(r.Context())
		if err != nil || len(tok) == 0 {
			if err != nil {
				h.log.Warn("scim token unreadable")
			}
			tok = nil
		}
		have := sha256.Sum256(tok)
		eq := subtle.ConstantTimeCompare(want[:], have[:]) & boolInt(len(tok) > 0)
		matched = subtle.ConstantTimeSelect(eq, i, matched)
		count += eq
	}
	if count != 1 {
		return "", false
	}
	return h.tenantNames[matched], true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sortedNames(m map[string]TokenSource) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
