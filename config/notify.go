package config

import (
	"fmt"
	"io/fs"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Reports configures the reports written beside archived exports.
type Reports struct {
	// Mode is the octal file mode of the reports ("0640"), so that an HR
	// group can read them; the state stays 0600 whatever it is.
	Mode string `yaml:"mode"`

	mode fs.FileMode
}

// FileMode is the validated Mode.
func (r Reports) FileMode() fs.FileMode { return r.mode }

// DefaultReportsMode is the mode of reports by default: the owner reads and
// writes, the group reads.
const DefaultReportsMode = "0640"

// The choices of notify.on.
const (
	NotifyProblems = "problems" // a failed run, a safeguard stop, rejected rows, held grants
	NotifyAlways   = "always"   // after every run
	NotifyNever    = "never"
)

// The payload formats of a webhook.
const (
	WebhookGeneric = "generic"
	WebhookSlack   = "slack"
	WebhookTeams   = "teams"
)

// Notify configures the notifications sent after runs: the SMTP server
// and the delivery policy shared by every tenant.
type Notify struct {
	// On is when a tenant is notified unless it says otherwise: problems
	// (default), always, or never.
	On string `yaml:"on"`
	// Attempts bounds the tries of one delivery, the first included.
	Attempts int `yaml:"attempts"`
	// Backoff is the wait before the second try; it doubles at each try.
	Backoff Duration `yaml:"backoff"`
	// Timeout bounds one try.
	Timeout Duration `yaml:"timeout"`
	// SMTP is the mail server; needed only when a tenant has e-mail
	// recipients.
	SMTP SMTP `yaml:"smtp"`
}

// SMTP is the mail server notifications are sent through.
type SMTP struct {
	// Host and Port are the server's address (port default 587).
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	// From is the sender's address.
	From string `yaml:"from"`
	// Username and PasswordFile are the credentials (a mounted secret);
	// none means no authentication.
	Username     string `yaml:"username"`
	PasswordFile string `yaml:"passwordFile"`
	// Password is read from PasswordFile; it never prints.
	Password Secret `yaml:"-"`
	// StartTLS is required (default: the server must offer STARTTLS) or
	// none (plain SMTP, only to a loopback server).
	StartTLS string `yaml:"starttls"`
	// CAFile names PEM certificates of the authorities that sign the
	// server's certificate; empty trusts the system's.
	CAFile string `yaml:"caFile"`
}

// TenantNotify is who hears about a tenant's runs.
type TenantNotify struct {
	// On overrides notify.on for the tenant.
	On string `yaml:"on"`
	// Email lists the recipients' addresses.
	Email []string `yaml:"email"`
	// Webhooks are the HTTP endpoints that get a JSON payload.
	Webhooks []Webhook `yaml:"webhooks"`
}

// Webhook is one HTTP endpoint of a tenant's notifications.
type Webhook struct {
	// URLFile names a file (a mounted secret) holding the URL: Slack and
	// Teams URLs carry their credential.
	URLFile string `yaml:"urlFile"`
	// URL is read from URLFile, or from the environment variable URLEnv;
	// it never prints.
	URLEnv string `yaml:"urlEnv"`
	URL    Secret `yaml:"-"`
	// Format is generic (default), slack or teams.
	Format string `yaml:"format"`
}

// defaultNotify are the delivery defaults.
func defaultNotify() Notify {
	return Notify{On: NotifyProblems, Attempts: 4, Backoff: D(2 * time.Second), Timeout: D(10 * time.Second),
		SMTP: SMTP{Port: 587, StartTLS: "required"}}
}

// resolveNotifySecrets reads the SMTP password and the webhooks' URLs.
func (c *Config) resolveNotifySecrets(env func(string) (string, bool), ps *problems) {
	if f := c.Notify.SMTP.PasswordFile; f != "" {
		if v, ok := readFileSecret(f, "notify.smtp.passwordFile", ps); ok {
			c.Notify.SMTP.Password = NewSecret(v)
		}
	}
	for i := range c.Tenants {
		for k := range c.Tenants[i].Notify.Webhooks {
			w := &c.Tenants[i].Notify.Webhooks[k]
			path := fmt.Sprintf("tenants[%d].notify.webhooks[%d]", i, k)
			switch {
			case (w.URLFile == "") == (w.URLEnv == ""):
				ps.addf(path, "set exactly one of urlFile and urlEnv")
			case w.URLFile != "":
				if v, ok := readFileSecret(w.URLFile, path+".urlFile", ps); ok {
					w.URL = NewSecret(v)
				}
			default:
				if v, ok := readEnvSecret(env, w.URLEnv, path+".urlEnv", ps); ok {
					w.URL = NewSecret(v)
				}
			}
		}
	}
}

// validateReports checks reports.mode: octal, the owner reads and writes,
// nobody else writes.
func (c *Config) validateReports(ps *problems) {
	m, err := strconv.ParseUint(strings.TrimPrefix(c.Reports.Mode, "0o"), 8, 32)
	switch {
	case err != nil || m > 0o777:
		ps.addf("reports.mode", "must be an octal file mode such as 0640, not %q", c.Reports.Mode)
	case m&0o600 != 0o600:
		ps.addf("reports.mode", "must let the owner read and write (0600 at least), not %s", c.Reports.Mode)
	case m&0o033 != 0:
		ps.addf("reports.mode", "must not let the group or others write or search: %s (use 0640 or 0644)", c.Reports.Mode)
	default:
		c.Reports.mode = fs.FileMode(m)
		for i := range c.Tenants {
			if o := c.Tenants[i].Source.Options; o != nil {
				o.SetReportMode(c.Reports.mode)
			}
		}
	}
}

// validateNotify checks the notification settings and each tenant's.
func (c *Config) validateNotify(ps *problems) {
	n := &c.Notify
	checkOn("notify.on", n.On, ps)
	if n.Attempts < 1 {
		ps.addf("notify.attempts", "must be at least 1")
	}
	if n.Backoff.Duration <= 0 {
		ps.addf("notify.backoff", "must be greater than 0")
	}
	if n.Timeout.Duration <= 0 {
		ps.addf("notify.timeout", "must be greater than 0")
	}
	mailed := false
	for i := range c.Tenants {
		t := &c.Tenants[i].Notify
		path := fmt.Sprintf("tenants[%d].notify", i)
		if t.On != "" {
			checkOn(path+".on", t.On, ps)
		}
		for k, addr := range t.Email {
			if _, err := mail.ParseAddress(addr); err != nil || strings.ContainsAny(addr, "<>") {
				ps.addf(fmt.Sprintf("%s.email[%d]", path, k), "must be a plain e-mail address such as hr-team@example.com")
			}
		}
		mailed = mailed || len(t.Email) > 0
		for k, w := range t.Webhooks {
			switch w.Format {
			case "", WebhookGeneric, WebhookSlack, WebhookTeams:
			default:
				ps.addf(fmt.Sprintf("%s.webhooks[%d].format", path, k), "must be one of generic, slack, teams")
			}
			if w.URL.IsSet() {
				if u, err := url.Parse(w.URL.Value()); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
					ps.addf(fmt.Sprintf("%s.webhooks[%d]", path, k), "the URL must be an http or https URL")
				}
			}
		}
	}
	if mailed {
		c.validateSMTP(ps)
	}
}

// validateSMTP checks the mail server, needed once a tenant has recipients.
func (c *Config) validateSMTP(ps *problems) {
	s := &c.Notify.SMTP
	if strings.TrimSpace(s.Host) == "" {
		ps.addf("notify.smtp.host", "is required when a tenant has notify.email recipients")
	}
	if s.Port < 1 || s.Port > 65535 {
		ps.addf("notify.smtp.port", "must be a TCP port (1-65535)")
	}
	if _, err := mail.ParseAddress(s.From); err != nil {
		ps.addf("notify.smtp.from", "must be the sender's e-mail address")
	}
	switch s.StartTLS {
	case "required":
	case "none":
		if !loopbackHost(s.Host) {
			ps.addf("notify.smtp.starttls", "none sends mail and credentials in clear: only to a loopback server")
		}
	default:
		ps.addf("notify.smtp.starttls", "must be required or none")
	}
	if (s.Username == "") != (s.PasswordFile == "") {
		ps.addf("notify.smtp", "set both username and passwordFile, or neither")
	}
}

func checkOn(path, on string, ps *problems) {
	switch on {
	case NotifyProblems, NotifyAlways, NotifyNever:
	default:
		ps.addf(path, "must be one of problems, always, never")
	}
}

// NotifyOn is when the tenant is notified: its own choice, or notify.on.
func (c *Config) NotifyOn(t Tenant) string {
	if t.Notify.On != "" {
		return t.Notify.On
	}
	return c.Notify.On
}

// loopbackHost tells whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
