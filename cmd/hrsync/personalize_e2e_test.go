package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The personalization end-to-end test: 200 new hires, the emulator taking
// 1 s per first personalize call, 20 calls at once.
const (
	hires            = 200
	personalizeDelay = time.Second
	personalizeConc  = 20
)

// newPersonalizeEnv starts an emulator whose first personalize call takes
// personalizeDelay and writes a configuration that personalizes its
// personalizable collection for new hires. The client's rate limit is
// raised: at the default 10 calls/s, 2 x 200 calls would take 40 s.
func newPersonalizeEnv(t *testing.T) *env {
	t.Helper()
	emu := startEmulator(t, "--personalize-delay", personalizeDelay.String())
	ds := emu.dataset(t)
	e := &env{t: t, dir: t.TempDir(), emu: emu, company: ds.CompanyID}
	for _, c := range ds.Collections {
		if c.Personalizable {
			e.coll = c.ID
			break
		}
	}
	if e.company == "" || e.coll == "" {
		t.Fatalf("the emulator's dataset names no company or personalizable collection: %+v", ds)
	}
	e.drop = filepath.Join(e.dir, "drop")
	if err := os.MkdirAll(e.drop, 0o700); err != nil {
		t.Fatal(err)
	}
	e.config = filepath.Join(e.dir, "hrsync.yaml")
	cfg := fmt.Sprintf(`store:
  url: sqlite:%s
api:
  baseUrl: %s
  timeout: 20s
  personalizeTimeout: 30s
  ratePerSecond: 1000
  burst: 100
  maxConcurrency: 50
  maxAttempts: 3
log:
  level: warn
  format: json
tenants:
  - name: %s
    companyId: %s
    collectionId: %s
    source:
      csv:
        dir: %s
        stableFor: 1ms
    people:
      batchSize: 50
      concurrency: 4
      defaultBalance: 25
    personalize:
      collections: [%s]
      windowBefore: 30d
      windowAfter: 7d
      concurrency: %d
      maxAttempts: 3
`, filepath.Join(e.dir, "state.db"), emu.url, tenantName, e.company, e.coll, e.drop, e.coll, personalizeConc)
	if err := os.WriteFile(e.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// newHires are n fictional people starting within the next 20 days.
func newHires(n int) []person {
	today := time.Now().UTC()
	out := genPeople(0, n)
	for i := range out {
		out[i].start = today.AddDate(0, 0, i%20).Format(time.DateOnly)
	}
	return out
}

// storedPersonalization is a row of the worker's personalizations table.
type storedPersonalization struct {
	state     string
	status    string
	sha       string
	fields    string
	attempts  int
	updatedAt time.Time
}

// personalizations reads the worker's personalizations by externalId.
func (e *env) personalizations() map[string]storedPersonalization {
	e.t.Helper()
	rows, err := e.stateDB().QueryContext(e.t.Context(), `SELECT external_id, state, platform_status, sha, fields,
		attempts, updated_at FROM personalizations WHERE tenant = ? AND collection_id = ?`, tenantName, e.coll)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]storedPersonalization{}
	for rows.Next() {
		var id string
		var p storedPersonalization
		if err := rows.Scan(&id, &p.state, &p.status, &p.sha, &p.fields, &p.attempts, &p.updatedAt); err != nil {
			e.t.Fatal(err)
		}
		out[id] = p
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// personalizeCalls counts the answered personalize calls in the emulator's
// log (a call abandoned by a killed worker is answered 503 and left out).
func personalizeCalls(t *testing.T, e *env) int {
	t.Helper()
	return personalizeCallsSince(t, e, time.Time{})
}

// personalizeCallsSince counts the personalize calls answered 200 that the
// emulator began to handle at since or later.
func personalizeCallsSince(t *testing.T, e *env, since time.Time) int {
	t.Helper()
	n := 0
	for _, r := range e.emu.requests(t) {
		if r.OperationID == "personalizeCollection" && r.Status == http.StatusOK && !r.Time.Before(since) {
			n++
		}
	}
	return n
}

// askPlatform sends p's source fields to the emulator's personalize
// endpoint itself and returns its answer: sha, status and the fields as JSON.
func askPlatform(t *testing.T, e *env, p person) (sha, status string, fields json.RawMessage) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"companyId": e.company, "sourceFields": map[string]string{
		"firstName": p.first, "lastName": p.last, "department": p.dept, "location": p.loc,
		"startDate": p.start + "T00:00:00Z", "birthDate": p.birth + "T00:00:00Z",
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.emu.url+"/api/ext/v1/collection/"+e.coll+"/personalize", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.emu.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("personalize %s: %s %s %v", p.id, resp.Status, b, err)
	}
	var out struct {
		Sha    string          `json:"sha"`
		Status string          `json:"status"`
		Fields json.RawMessage `json:"fields"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out.Sha, out.Status, out.Fields
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("decode %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestE2EPersonalize runs the binary through the personalization of 200
// new hires; each step builds on the one before.
func TestE2EPersonalize(t *testing.T) {
	e := newPersonalizeEnv(t)
	staff := newHires(hires)
	e.dropFile("staff-1.csv", csvExport(staff))
	e.mustRun(0, "run", "people")

	step(t, "plan lists every new hire and makes no call", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		res := e.mustRun(0, "plan")
		if n := strings.Count(res.stdout, "would personalize "); n != hires {
			t.Errorf("plan lists %d personalizations, want %d:\n%s", n, hires, res)
		}
		var doc struct {
			Personalize []struct {
				Items []struct {
					ExternalID string `json:"externalId"`
					Reason     string `json:"reason"`
				} `json:"items"`
			} `json:"personalize"`
		}
		js := e.mustRun(0, "plan", "-o", "json")
		if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil || len(doc.Personalize) != 1 || len(doc.Personalize[0].Items) != hires {
			t.Errorf("plan -o json: %v, want the %d personalizations the text lists:\n%.2000s", err, hires, js.stdout)
		}
		if n := personalizeCalls(t, e); n != 0 {
			t.Errorf("plan made %d personalize calls", n)
		}
	})
	step(t, "one run personalizes all 200 within the bound", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		began := time.Now()
		res := e.mustRun(0, "run", "personalize")
		took := time.Since(began)
		bound := time.Duration(hires/personalizeConc) * personalizeDelay
		t.Logf("personalized %d new hires at concurrency %d with a %s delay in %s: %.2fx the bound of %s (target 1.2x)",
			hires, personalizeConc, personalizeDelay, took.Round(time.Millisecond), took.Seconds()/bound.Seconds(), bound)
		got := e.personalizations()
		done := 0
		for _, p := range got {
			if p.state == "done" && p.status == "Done" {
				done++
			}
		}
		if len(got) != hires || done != hires {
			t.Fatalf("%d rows, %d done; want %d done\n%s", len(got), done, hires, res)
		}
		// One call that blocks for the delay and answers Pending, then one
		// that confirms Done.
		if n := personalizeCalls(t, e); n != 2*hires {
			t.Errorf("%d personalize calls, want %d", n, 2*hires)
		}
	})
	step(t, "the stored fields are those the platform returns, without the birth group", func(t *testing.T) {
		e := e.in(t)
		got := e.personalizations()
		for _, p := range staff {
			sha, status, fields := askPlatform(t, e, p)
			var answer map[string]json.RawMessage
			if err := json.Unmarshal(fields, &answer); err != nil || answer["birth"] == nil {
				t.Fatalf("%s: the platform's fields %s have no birth group (%v): the test would not see it dropped", p.id, fields, err)
			}
			delete(answer, "birth") // derived from the birth date: never stored
			fields, _ = json.Marshal(answer)
			row := got[p.id]
			if status != "Done" || row.sha != sha || !sameJSON(t, []byte(row.fields), fields) {
				t.Errorf("%s: stored sha %s fields %s; the platform answers %s %s %s", p.id, row.sha, row.fields, status, sha, fields)
			}
		}
	})
	step(t, "a rerun makes no call", func(t *testing.T) {
		e := e.in(t)
		e.emu.clearRequests(t)
		res := e.mustRun(0, "run", "personalize")
		if n := personalizeCalls(t, e); n != 0 {
			t.Errorf("the rerun made %d personalize calls\n%s", n, res)
		}
	})
	step(t, "status shows every personalization done", func(t *testing.T) {
		e := e.in(t)
		res := e.mustRun(0, "status", "--json")
		var rep struct {
			Tenants []struct {
				PersonalizationsPending *int                      `json:"personalizationsPending"`
				Personalizations        map[string]map[string]int `json:"personalizations"`
			} `json:"tenants"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("status --json: %v\n%s", err, res)
		}
		if len(rep.Tenants) != 1 || rep.Tenants[0].PersonalizationsPending == nil || *rep.Tenants[0].PersonalizationsPending != 0 {
			t.Fatalf("status: %+v, want one tenant with 0 pending", rep.Tenants)
		}
		done := 0
		for _, states := range rep.Tenants[0].Personalizations {
			done += states["done"]
		}
		if done != 200 {
			t.Errorf("status shows %d personalizations done, want 200: %v", done, rep.Tenants[0].Personalizations)
		}
	})
	step(t, "a changed department re-personalizes exactly that person", func(t *testing.T) {
		e := e.in(t)
		before := e.personalizations()
		changed := staff[7]
		staff[7].dept = "Research"
		e.dropFile("staff-2.csv", csvExport(staff))
		e.mustRun(0, "run", "people")
		e.emu.clearRequests(t)
		e.mustRun(0, "run", "personalize")
		if n := personalizeCalls(t, e); n != 2 {
			t.Errorf("%d personalize calls, want 2 (call and confirmation) for one person", n)
		}
		after := e.personalizations()
		for id, b := range before {
			a := after[id]
			if id == changed.id {
				if a.sha == b.sha || !strings.Contains(a.fields, `"Research"`) || a.state != "done" {
					t.Errorf("%s not re-personalized: %+v", id, a)
				}
				continue
			}
			if a != b {
				t.Errorf("%s changed though its fields did not: %+v -> %+v", id, b, a)
			}
		}
	})
}

// TestE2EPersonalizeKilled kills a personalize run midway (SIGKILL) and
// checks that the next run closes the killed run's record as interrupted
// and finishes the work without redoing what the killed one committed.
func TestE2EPersonalizeKilled(t *testing.T) {
	e := newPersonalizeEnv(t)
	staff := newHires(hires)
	e.dropFile("staff-1.csv", csvExport(staff))
	e.mustRun(0, "run", "people")
	e.emu.clearRequests(t)

	var atKill map[string]storedPersonalization
	step(t, "kill the run once some are done", func(t *testing.T) {
		e := e.in(t)
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		cmd := e.command(ctx, "run", "personalize")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		db := e.stateDB()
		doneRows := func() int {
			var n int
			// The table appears with the worker's migration; until then, none.
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM personalizations WHERE state = 'done'").Scan(&n); err != nil {
				return 0
			}
			return n
		}
		reached := waitFor(time.Minute, func() bool { return doneRows() >= hires/4 })
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if !reached {
			t.Fatalf("fewer than %d done before the kill:\n%s", hires/4, out.String())
		}
		atKill = e.personalizations()
		if len(atKill) >= hires {
			t.Fatalf("the run finished (%d rows) before it was killed", len(atKill))
		}
		t.Logf("killed with %d of %d personalizations committed", len(atKill), hires)
		if n := e.count(`SELECT COUNT(*) FROM runs WHERE job = 'personalize' AND outcome = 'running'`); n != 1 {
			t.Errorf("%d personalize runs left running by the kill, want 1", n)
		}
	})
	step(t, "the next run finishes without redoing the committed ones", func(t *testing.T) {
		e := e.in(t)
		// The calls the kill abandoned began before this run: they are left
		// out whenever the emulator logs them, and however it answers them
		// (503 when it sees the caller gone, 200 when it answered first).
		e.emu.clearRequests(t)
		since := time.Now()
		e.mustRun(0, "run", "personalize")
		if n := e.count(`SELECT COUNT(*) FROM runs WHERE job = 'personalize' AND outcome = 'interrupted'`); n != 1 ||
			e.count(`SELECT COUNT(*) FROM runs WHERE outcome = 'running'`) != 0 {
			t.Errorf("%d personalize runs closed as interrupted by the next run, want 1 and none left running", n)
		}
		got := e.personalizations()
		pendingAtKill := 0
		for id, k := range atKill {
			if k.state == "pending" {
				pendingAtKill++
				continue
			}
			if got[id] != k {
				t.Errorf("%s was redone: %+v -> %+v", id, k, got[id])
			}
		}
		for _, p := range staff {
			if got[p.id].state != "done" {
				t.Errorf("%s is %q after the second run", p.id, got[p.id].state)
			}
		}
		// Each call of this run is counted in a row's attempts: one or two
		// (call and confirmation) for each person the killed run had not
		// committed (one when the platform had finished the abandoned call:
		// it then answers Done at once), one for each pending person.
		want := 0
		for _, p := range staff {
			k, committed := atKill[p.id]
			switch {
			case !committed:
				if a := got[p.id].attempts; a < 1 || a > 2 {
					t.Errorf("%s: %d attempts after the kill, want 1 or 2", p.id, a)
				}
				want += got[p.id].attempts
			case k.state == "pending":
				want += got[p.id].attempts - k.attempts
			}
		}
		if n := personalizeCallsSince(t, e, since); n != want || n < hires-len(atKill) {
			t.Errorf("the second run made %d calls; the rows count %d for the %d not committed and the %d pending",
				n, want, hires-len(atKill), pendingAtKill)
		}
	})
}
