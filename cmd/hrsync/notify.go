package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"go.uber.org/zap"

	"hrsync/config"
	"hrsync/internal/metrics"
	"hrsync/internal/notify"
	"hrsync/internal/runner"
	"hrsync/model"
	"hrsync/sync/people"
)

// cycleNotifier is the runner's Notifier: it tells each tenant's channels
// about the cycles its notify.on asks for, the same way for `run` and the
// daemon.
type cycleNotifier struct {
	n  *notify.Notifier
	on map[string]string
}

// newNotifier builds the channels of the given tenants; nil when none has
// one.
func (a *app) newNotifier(tenants []config.Tenant, m *metrics.Metrics) (runner.Notifier, error) {
	var counter notify.Counter
	if m != nil {
		counter = m
	}
	nc := a.cfg.Notify
	n := notify.New(notify.Options{Attempts: nc.Attempts, Backoff: nc.Backoff.Duration, Timeout: nc.Timeout.Duration,
		Counter: counter, Logger: a.log.Named("notify")})
	c := &cycleNotifier{n: n, on: map[string]string{}}
	client := &http.Client{Timeout: nc.Timeout.Duration}
	for _, t := range tenants {
		c.on[t.Name] = a.cfg.NotifyOn(t)
		for _, w := range t.Notify.Webhooks {
			n.Add(t.Name, &notify.Webhook{URL: w.URL.Value(), Format: w.Format, Client: client})
		}
		if len(t.Notify.Email) > 0 {
			mail, err := newMail(nc.SMTP, t.Notify.Email)
			if err != nil {
				return nil, err
			}
			n.Add(t.Name, mail)
		}
	}
	some := false
	for _, t := range tenants {
		for _, ch := range n.Channels(t.Name) {
			some = true
			if m != nil {
				m.NotificationChannel(t.Name, ch)
			}
		}
	}
	if !some {
		return nil, nil
	}
	return c, nil
}

// newMail is the e-mail channel of a tenant's recipients.
func newMail(s config.SMTP, to []string) (*notify.Mail, error) {
	m := &notify.Mail{Host: s.Host, Port: s.Port, From: s.From, To: to, Username: s.Username,
		Password: s.Password.Value(), PlainText: s.StartTLS == "none"}
	if s.CAFile != "" {
		pem, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, withCode(exitUsage, fmt.Errorf("notify.smtp.caFile: %w", withoutPath(err)))
		}
		m.RootCAs = x509.NewCertPool()
		if !m.RootCAs.AppendCertsFromPEM(pem) {
			return nil, withCode(exitUsage, fmt.Errorf("notify.smtp.caFile: no PEM certificate in %s", s.CAFile))
		}
	}
	return m, nil
}

// Notify implements runner.Notifier.
func (c *cycleNotifier) Notify(ctx context.Context, k runner.Key, res runner.Result, err error) {
	if !c.wants(k.Tenant, res.Outcome) && !c.wantsApproval(k.Tenant, res) {
		return
	}
	c.n.Send(ctx, c.event(k, res, err))
}

// wants tells whether the tenant is told about a cycle with this outcome:
// never about one skipped for a held lock or cut short by a stop (the next
// run does its work); with problems, about every outcome but ok.
func (c *cycleNotifier) wants(tenant string, outcome model.RunOutcome) bool {
	if !c.n.Has(tenant) || outcome == model.OutcomeLocked || outcome == model.OutcomeInterrupted {
		return false
	}
	switch c.on[tenant] {
	case config.NotifyAlways:
		return true
	case config.NotifyProblems:
		return outcome != model.OutcomeOK
	}
	return false
}

// wantsApproval tells whether a tenant told about problems is told about
// a cycle that ended ok all the same: one that took an export an HR admin
// approved past the safeguards (people.Report.Approved), so that an
// approval never goes unheard.
func (c *cycleNotifier) wantsApproval(tenant string, res runner.Result) bool {
	rep, ok := res.Report.(*people.Report)
	return ok && rep.Approved() && c.n.Has(tenant) && c.on[tenant] == config.NotifyProblems
}

// event is what the message says about a cycle: its outcome, cause and
// next step as its last line says them, and for a people cycle its files,
// safeguard stops, rejected rows and held grants.
func (c *cycleNotifier) event(k runner.Key, res runner.Result, err error) notify.Event {
	cause, next := (&runner.End{Key: k, Res: res, Err: err}).Describe()
	e := notify.Event{Job: string(k.Job), Tenant: k.Tenant, Outcome: string(res.Outcome), Cause: cause, Next: next,
		Counts: res.Counts, At: time.Now().UTC()}
	if e.Counts == nil {
		e.Counts = map[string]int{}
	}
	if rep, ok := res.Report.(*people.Report); ok && rep != nil {
		rep.Notify(&e)
	}
	return e
}

// logNotifyConfig says at start which tenants are told, without addresses.
func logNotifyConfig(log *zap.Logger, tenants []config.Tenant, cfg *config.Config) {
	for _, t := range tenants {
		if len(t.Notify.Email)+len(t.Notify.Webhooks) > 0 {
			log.Debug("notifications", zap.String("tenant", t.Name), zap.String("on", cfg.NotifyOn(t)),
				zap.Int("recipients", len(t.Notify.Email)), zap.Int("webhooks", len(t.Notify.Webhooks)))
		}
	}
}
