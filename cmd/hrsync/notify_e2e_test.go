package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// receiver is a local webhook endpoint that answers with the statuses
// given, in turn (the last one from then on), and keeps every body.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	statuses []int
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b := make([]byte, 0, 4096)
		buf := make([]byte, 4096)
		for {
			n, err := req.Body.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				break
			}
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		status := r.statuses[min(len(r.bodies), len(r.statuses))-1]
		r.mu.Unlock()
		if req.Header.Get("Content-Type") != "application/json" {
			status = http.StatusUnsupportedMediaType
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// withNotify adds notification settings to the env's configuration: the
// tenant's recipients and webhooks (lines of its mapping), and the
// top-level notify section.
func (e *env) withNotify(tenantLines, topLevel string) {
	e.t.Helper()
	b, err := os.ReadFile(e.config)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.config, []byte(string(b)+tenantLines+topLevel), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// secretFile writes a mounted secret into the test's folder.
func (e *env) secretFile(name, content string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(content+"\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// TestNotifications: a run that rejects rows tells the tenant's
// recipients over a real SMTP server (mailpit, STARTTLS and credentials)
// and its webhooks in the generic, Slack and Teams shapes, with counts,
// file names, the rejected rows, the reports and the next step, and never
// an e-mail address or a birth date of the export; a webhook that fails
// once is tried again; one that always fails is given up, logged, and
// leaves the run's exit code as it is.
func TestNotifications(t *testing.T) {
	mp := startMailpit(t)
	generic := newReceiver(t, http.StatusServiceUnavailable, http.StatusOK)
	slack := newReceiver(t, http.StatusOK)
	teams := newReceiver(t, http.StatusOK)
	dead := newReceiver(t, http.StatusInternalServerError)

	e := newEnv(t, configOptions{})
	e.withNotify(fmt.Sprintf(`    notify:
      email: [hr-team@example.org, payroll@example.org]
      webhooks:
        - {urlFile: %s}
        - {urlFile: %s, format: slack}
        - {urlFile: %s, format: teams}
        - {urlFile: %s}
`, e.secretFile("generic-url", generic.srv.URL+"/hook"), e.secretFile("slack-url", slack.srv.URL+"/services/T0/B0/x"),
		e.secretFile("teams-url", teams.srv.URL+"/workflows/1"), e.secretFile("dead-url", dead.srv.URL+"/down")),
		fmt.Sprintf(`notify:
  attempts: 3
  backoff: 50ms
  timeout: 5s
  smtp:
    host: 127.0.0.1
    port: %d
    from: hrsync@example.org
    username: hrsync
    passwordFile: %s
    caFile: %s
`, mp.smtpPort, e.secretFile("smtp-password", "not-a-real-password"), mp.caFile))

	all, _ := rejectsExport()
	e.dropFile("employees.csv", csvExport(all))
	res := e.mustRun(4, "run", "people") // attention: rows rejected, whatever the notifications did

	// Nothing of the export's people but their externalIds may be sent.
	private := func(t *testing.T, where, body string) {
		t.Helper()
		for _, p := range all {
			for _, secret := range []string{p.email, p.birth} {
				if strings.Contains(body, secret) {
					t.Errorf("%s carries %s of %s", where, secret, p.id)
				}
			}
		}
	}
	mustHold := func(t *testing.T, where, body string) {
		t.Helper()
		for _, want := range []string{
			"hrsync people acme: attention (employees.csv)",
			"What happened: employees.csv: 3 people added (85.00 granted), 2 rows rejected.",
			"Next step: Fix the rejected rows in employees.csv.rejects.csv (beside this report) and drop that file into the drop folder again",
			"employees.csv line 3, email: not a valid e-mail address",
			`employees.csv line 5, birthDate: date "19**-**-**" does not match`,
			"archived as processed/employees.csv",
			"report: processed/employees.csv.report.html",
			"report: processed/employees.csv.rejects.csv",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", where, want, body)
			}
		}
	}

	t.Run("e-mail over SMTP with STARTTLS", func(t *testing.T) {
		msgs := mp.messages(t)
		if len(msgs) != 1 {
			t.Fatalf("mailpit received %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		var to []string
		for _, a := range m.To {
			to = append(to, a.Address)
		}
		if m.From.Address != "hrsync@example.org" || !slices.Equal(to, []string{"hr-team@example.org", "payroll@example.org"}) {
			t.Errorf("from %s to %v", m.From.Address, to)
		}
		if m.Subject != "hrsync people acme: attention (employees.csv)" {
			t.Errorf("subject %q", m.Subject)
		}
		mustHold(t, "the e-mail", m.Text)
		private(t, "the e-mail", m.Subject+m.Text+m.HTML)
	})

	t.Run("generic webhook, tried again after a 503", func(t *testing.T) {
		got := generic.got()
		if len(got) != 2 {
			t.Fatalf("the generic webhook got %d posts, want 2 (a 503, then the delivery)", len(got))
		}
		if string(got[0]) != string(got[1]) {
			t.Error("the retry posted another body")
		}
		var ev struct {
			Job, Tenant, Outcome, Cause, Next, Text string
			Counts                                  map[string]int
			Files                                   []struct {
				Name, Outcome, ArchivedAs string
				Reports                   []string
			}
			Rejections []struct {
				File, Column, Reason string
				Line                 int
			}
		}
		if err := json.Unmarshal(got[1], &ev); err != nil {
			t.Fatalf("generic payload: %v\n%s", err, got[1])
		}
		if ev.Job != "people" || ev.Tenant != tenantName || ev.Outcome != "attention" || ev.Counts["rejected"] != 2 || ev.Counts["created"] != 3 {
			t.Errorf("generic payload: %+v", ev)
		}
		if len(ev.Files) != 1 || ev.Files[0].Name != "employees.csv" || ev.Files[0].ArchivedAs != "processed/employees.csv" || len(ev.Files[0].Reports) != 3 {
			t.Errorf("files: %+v", ev.Files)
		}
		if len(ev.Rejections) != 2 || ev.Rejections[0].Line != 3 || ev.Rejections[0].Column != "email" || ev.Rejections[1].Line != 5 {
			t.Errorf("rejections: %+v", ev.Rejections)
		}
		mustHold(t, "the generic payload's text", ev.Text)
		private(t, "the generic payload", string(got[1]))
	})

	t.Run("Slack-compatible payload", func(t *testing.T) {
		got := slack.got()
		if len(got) != 1 {
			t.Fatalf("slack got %d posts, want 1", len(got))
		}
		var msg map[string]any
		if err := json.Unmarshal(got[0], &msg); err != nil {
			t.Fatal(err)
		}
		text, ok := msg["text"].(string)
		if len(msg) != 1 || !ok {
			t.Fatalf("slack payload is not {\"text\": ...}: %s", got[0])
		}
		mustHold(t, "the Slack text", text)
		private(t, "the Slack payload", string(got[0]))
	})

	t.Run("Teams-compatible payload: a message with an Adaptive Card", func(t *testing.T) {
		got := teams.got()
		if len(got) != 1 {
			t.Fatalf("teams got %d posts, want 1", len(got))
		}
		var msg struct {
			Type        string
			Attachments []struct {
				ContentType string
				Content     struct {
					Type, Version string
					Body          []struct {
						Type, Text string
						Facts      []struct{ Title, Value string }
					}
				}
			}
		}
		if err := json.Unmarshal(got[0], &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type != "message" || len(msg.Attachments) != 1 || msg.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" ||
			msg.Attachments[0].Content.Type != "AdaptiveCard" || msg.Attachments[0].Content.Version == "" {
			t.Fatalf("teams payload shape: %s", got[0])
		}
		var texts []string
		facts := map[string]string{}
		for _, b := range msg.Attachments[0].Content.Body {
			texts = append(texts, b.Text)
			for _, f := range b.Facts {
				facts[f.Title] = f.Value
			}
		}
		if texts[0] != "hrsync people acme: attention (employees.csv)" || len(facts) != 0 {
			t.Errorf("teams card: title %q, facts %v; want the title and no counter", texts[0], facts)
		}
		mustHold(t, "the Teams card", strings.Join(texts, "\n"))
		private(t, "the Teams payload", string(got[0]))
	})

	t.Run("a webhook that always fails is given up and logged", func(t *testing.T) {
		if got := len(dead.got()); got != 3 {
			t.Errorf("the failing webhook got %d posts, want notify.attempts (3)", got)
		}
		if !strings.Contains(res.stderr, "notification not delivered; the run's outcome stands") ||
			!strings.Contains(res.stderr, "webhook answered 500 Internal Server Error") {
			t.Errorf("no log line for the undelivered notification:\n%s", res.stderr)
		}
		if strings.Contains(res.stderr, dead.srv.URL) || strings.Contains(res.stderr, "/down") {
			t.Error("the log names the webhook's URL (it may carry a credential)")
		}
		private(t, "the log", res.stderr)
	})

	t.Run("a run that needs nobody tells nobody", func(t *testing.T) {
		before := len(generic.got())
		e.mustRun(0, "run", "people") // nothing ready: ok
		if got := len(generic.got()); got != before {
			t.Errorf("an ok run was notified (notify.on: problems): %d posts, then %d", before, got)
		}
		if got := len(mp.messages(t)); got != 1 {
			t.Errorf("an ok run sent an e-mail: %d messages", got)
		}
	})
}
