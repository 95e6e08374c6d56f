package main_test

// Helpers of the SCIM end-to-end tests: a daemon configured from
// examples/scim.yaml (its addresses, state and settle delay changed for the
// test), an identity provider's client that sends what Microsoft Entra ID
// sends, and reads of the worker's state while the daemon runs.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SCIM schema URNs.
const (
	scimCoreUser       = "urn:ietf:params:scim:schemas:core:2.0:User"
	scimEnterpriseUser = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	scimHrsyncUser     = "urn:ietf:params:scim:schemas:extension:hrsync:2.0:User"
	scimPatchOp        = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
)

// exampleSCIMDir is the folder of examples/scim.yaml and its token file.
var exampleSCIMDir = filepath.Join("..", "..", "examples")

// newSCIMEnv starts an emulator and writes the configuration of
// examples/scim.yaml into the test's folder, with its token file beside it,
// changed only where a test must: the listeners on free ports, the
// emulator's address, the state (a SQLite file in the test's folder, or
// with storeKind storePostgres a fresh schema of the test server), JSON
// logs, the settle delay, and extra keys under the tenant's people section.
// Each change must find its line in the example, so the test follows the
// file.
func newSCIMEnv(t *testing.T, storeKind, settle string, people ...string) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), storeKind: storeKind}
	storeCfg := "store:\n  url: sqlite:" + filepath.Join(e.dir, "state.db") + "\n"
	if storeKind == storePostgres {
		e.pgURL = postgresURL(t)
		e.schema = freshSchema(t, e.pgURL) // registered before the emulator starts, so dropped after it stops
		storeCfg = "store:\n  schema: " + e.schema + "\n"
	}
	e.emu = startEmulator(t)
	ds := e.emu.dataset(t)
	e.company = ds.CompanyID
	for _, c := range ds.Collections {
		if !c.Personalizable {
			e.coll = c.ID
			break
		}
	}
	body, err := os.ReadFile(filepath.Join(exampleSCIMDir, "scim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for _, r := range [][2]string{
		{`listen: "127.0.0.1:8090"`, `listen: "127.0.0.1:0"`},
		{`listen: "127.0.0.1:9090"`, `listen: "127.0.0.1:0"`},
		{"settle: 10s", "settle: " + settle},
		{"baseUrl: http://127.0.0.1:8080", "baseUrl: " + e.emu.url},
		{"companyId: 10000000-0000-4000-8000-000000000001", "companyId: " + e.company},
		{"collectionId: 20000000-0000-4000-8000-000000000002", "collectionId: " + e.coll},
		{"    people:\n", "    people:\n" + strings.Join(people, "")},
	} {
		if strings.Count(text, r[0]) != 1 {
			t.Fatalf("examples/scim.yaml no longer holds %q once: update the test", r[0])
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	text = storeCfg + "log:\n  level: info\n  format: json\n" + text
	e.config = filepath.Join(e.dir, "hrsync.yaml")
	if err := os.WriteFile(e.config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(exampleSCIMDir, "scim-acme.token"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "scim-acme.token"), tok, 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// scimToken is the example's token, which the test's configuration names.
func scimToken(t *testing.T) string {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(exampleSCIMDir, "scim-acme.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(tok))
}

// idp is an identity provider pushing to the daemon's SCIM endpoint: it
// waits and tries again on 429, as Entra and Okta do.
type idp struct {
	t      *testing.T
	base   string
	token  string
	client *http.Client
	ids    map[string]string // SCIM id by externalId
}

// newIDP waits for the daemon's SCIM address and returns a client of it.
func newIDP(t *testing.T, d *daemonProc) *idp {
	t.Helper()
	return &idp{t: t, base: waitSCIM(t, d), token: scimToken(t), client: &http.Client{Timeout: 30 * time.Second}, ids: map[string]string{}}
}

// do sends one request and decodes the answer; 429 is waited out.
func (c *idp) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			c.t.Fatal(err)
		}
	}
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(raw))
		if err != nil {
			cancel()
			c.t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if body != nil {
			req.Header.Set("Content-Type", "application/scim+json")
		}
		resp, err := c.client.Do(req)
		if err != nil {
			cancel()
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		cancel()
		if resp.StatusCode == http.StatusTooManyRequests {
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(secs, 1)) * time.Second)
			continue
		}
		var out map[string]any
		if len(b) > 0 {
			if err := json.Unmarshal(b, &out); err != nil {
				c.t.Fatalf("%s %s: %d %q is not JSON", method, path, resp.StatusCode, b)
			}
		}
		return resp.StatusCode, out
	}
	c.t.Fatalf("%s %s: still 429 after 100 tries", method, path)
	return 0, nil
}

// entraUser is person p as Entra's POST /Users carries them with hrsync's
// attribute mapping (docs/scim.md): the user principal name as userName,
// the mail nickname (here the HR id) as externalId, meta and an empty
// roles list as Entra always sends them, the hire date as a dateTime and
// the balance as a string.
func entraUser(p person) map[string]any {
	ext := map[string]any{"startDate": p.start + "T00:00:00Z", "location": p.loc}
	if p.balance != "" {
		ext["balanceOverride"] = p.balance
	}
	return map[string]any{
		"schemas":    []string{scimCoreUser, scimEnterpriseUser, scimHrsyncUser},
		"externalId": p.id,
		"userName":   p.email,
		"active":     true,
		"emails":     []map[string]any{{"primary": true, "type": "work", "value": p.email}},
		"meta":       map[string]any{"resourceType": "User"},
		"name":       map[string]any{"formatted": p.first + " " + p.last, "familyName": p.last, "givenName": p.first},
		"roles":      []any{},
		scimEnterpriseUser: map[string]any{
			"employeeNumber": p.id, "department": p.dept,
		},
		scimHrsyncUser: ext,
	}
}

// provision does what Entra does for a newly assigned user: look them up
// by userName, and create them when nobody matches.
func (c *idp) provision(p person) {
	c.t.Helper()
	filter := url.QueryEscape(fmt.Sprintf("userName eq %q", p.email))
	status, list := c.do(http.MethodGet, "/Users?filter="+filter, nil)
	if status != http.StatusOK || list["totalResults"] != float64(0) {
		c.t.Fatalf("look up %s: %d %v, want an empty list", p.id, status, list)
	}
	c.create(p)
}

// create sends Entra's POST /Users of person p.
func (c *idp) create(p person) {
	c.t.Helper()
	status, u := c.do(http.MethodPost, "/Users", entraUser(p))
	if status != http.StatusCreated {
		c.t.Fatalf("POST %s: %d %v", p.id, status, u)
	}
	c.ids[p.id], _ = u["id"].(string)
}

// patch sends Entra's PATCH of the user externalId with operations ops.
func (c *idp) patch(externalID string, ops ...map[string]any) {
	c.t.Helper()
	id := c.ids[externalID]
	status, u := c.do(http.MethodPatch, "/Users/"+id, map[string]any{"schemas": []string{scimPatchOp}, "Operations": ops})
	if status != http.StatusOK && status != http.StatusNoContent {
		c.t.Fatalf("PATCH %s: %d %v", externalID, status, u)
	}
}

// op is one PATCH operation, with its op in Entra's capitalised form.
func op(name, path string, value any) map[string]any {
	o := map[string]any{"op": name, "value": value}
	if path != "" {
		o["path"] = path
	}
	return o
}

// stateReader reads the worker's state (the SQLite file read-only, or the
// test's PostgreSQL schema) through one handle, while the daemon writes it.
type stateReader struct {
	t  *testing.T
	e  *env
	db *sql.DB
}

func (e *env) stateReader() stateReader { return stateReader{t: e.t, e: e, db: e.stateDB()} }

// ids lists the tenant's people in the state whose departure is recorded
// (departed) or not.
func (s stateReader) people(departed bool) map[string]bool {
	s.t.Helper()
	q := `SELECT external_id FROM people WHERE tenant = ? AND departed_at IS NULL`
	if departed {
		q = `SELECT external_id FROM people WHERE tenant = ? AND departed_at IS NOT NULL`
	}
	rows, err := s.db.QueryContext(s.t.Context(), s.e.rebind(q), tenantName)
	if err != nil {
		s.t.Fatalf("read people: %v", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			s.t.Fatal(err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		s.t.Fatal(err)
	}
	return out
}

// runs counts the tenant's people runs with the given outcome.
func (s stateReader) runs(outcome string) int {
	s.t.Helper()
	var n int
	err := s.db.QueryRowContext(s.t.Context(), s.e.rebind(`SELECT COUNT(*) FROM runs WHERE job = 'people' AND tenant = ? AND outcome = ?`),
		tenantName, outcome).Scan(&n)
	if err != nil {
		s.t.Fatalf("count runs: %v", err)
	}
	return n
}

// settledBound bounds every wait for the daemon to act on SCIM writes: the
// settle delay and a people run of a few hundred people, on a loaded
// machine. It is a bound on a wait, never an assert on how long it took.
const settledBound = 2 * time.Minute

// waitState polls cond every 100ms until it holds, and fails the test
// with what after settledBound.
func waitState(t *testing.T, d *daemonProc, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(settledBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen; the daemon's log:\n%s", what, tail(d.stderr.String(), 30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
