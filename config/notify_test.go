package config

import (
	"io/fs"
	"strings"
	"testing"
)

func TestReportsMode(t *testing.T) {
	t.Run("default 0640, copied to the drop folders", func(t *testing.T) {
		cfg, err := load(t, minimal, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Reports.FileMode() != 0o640 || csvOf(t, cfg.Tenants[0]).ReportMode != 0o640 {
			t.Errorf("mode %v, folder's %v; want 0640", cfg.Reports.FileMode(), csvOf(t, cfg.Tenants[0]).ReportMode)
		}
	})
	for _, c := range []struct {
		mode string
		want fs.FileMode
		bad  string
	}{
		{"0600", 0o600, ""}, {"0644", 0o644, ""}, {"0o640", 0o640, ""}, {"640", 0o640, ""},
		{"0660", 0, "must not let the group or others write"},
		{"0400", 0, "must let the owner read and write"},
		{"0648", 0, "must be an octal file mode"},
		{"rw-r-----", 0, "must be an octal file mode"},
		{"01640", 0, "must be an octal file mode"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cfg, err := load(t, "reports:\n  mode: \""+c.mode+"\"\n"+minimal, nil)
			if c.bad == "" {
				if err != nil || cfg.Reports.FileMode() != c.want {
					t.Fatalf("mode %s: %v, %v; want %v", c.mode, cfg, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "reports.mode") || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("mode %s: error %v, want %q", c.mode, err, c.bad)
			}
		})
	}
}

func TestNotifyConfig(t *testing.T) {
	dir := t.TempDir()
	url := writeFile(t, dir, "hook-url", "https://hooks.example.org/services/T/B/x\n")
	pass := writeFile(t, dir, "smtp-password", "s3cret\n")
	tenant := strings.TrimSuffix(minimal, "\n") + "\n    notify:\n      on: always\n      email: [hr@example.org]\n      webhooks:\n        - {urlFile: " + url + ", format: slack}\n"
	t.Run("a valid setup resolves its secrets", func(t *testing.T) {
		cfg, err := load(t, "notify:\n  smtp: {host: smtp.example.org, from: hrsync@example.org, username: hrsync, passwordFile: "+pass+"}\n"+tenant, nil)
		if err != nil {
			t.Fatal(err)
		}
		tn := cfg.Tenants[0]
		if cfg.NotifyOn(tn) != NotifyAlways || tn.Notify.Webhooks[0].URL.Value() != "https://hooks.example.org/services/T/B/x" ||
			cfg.Notify.SMTP.Password.Value() != "s3cret" || cfg.Notify.SMTP.Port != 587 || cfg.Notify.SMTP.StartTLS != "required" {
			t.Errorf("resolved %+v %+v", tn.Notify, cfg.Notify.SMTP)
		}
		y, err := cfg.YAML()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(y), "s3cret") || strings.Contains(string(y), "hooks.example.org") {
			t.Errorf("config show prints a secret:\n%s", y)
		}
	})
	for name, c := range map[string]struct{ yaml, want string }{
		"recipients without a server": {tenant, "notify.smtp.host"},
		"plain SMTP to a remote host": {"notify:\n  smtp: {host: smtp.example.org, from: a@example.org, starttls: none}\n" + tenant, "notify.smtp.starttls"},
		"a bad recipient":             {"notify:\n  smtp: {host: h, from: a@example.org}\n" + strings.Replace(tenant, "hr@example.org", "HR team", 1), "tenants[0].notify.email[0]"},
		"an unknown format":           {"notify:\n  smtp: {host: h, from: a@example.org}\n" + strings.Replace(tenant, "format: slack", "format: pager", 1), "tenants[0].notify.webhooks[0].format"},
		"an unknown choice":           {"notify:\n  on: sometimes\n" + minimal, "notify.on"},
		"a password without a user":   {"notify:\n  smtp: {host: h, from: a@example.org, passwordFile: " + pass + "}\n" + tenant, "set both username and passwordFile"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, c.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %s", err, c.want)
			}
		})
	}
}
