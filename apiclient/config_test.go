package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// testToken is the token every test uses; no output may contain it.
const testToken = "tok-3f9c1d7e-SECRET"

func validConfig() Config {
	return Config{BaseURL: "http://127.0.0.1:8080", Token: testToken, UserAgentVersion: "1.2.3"}
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // "" means valid
	}{
		{"valid", func(*Config) {}, ""},
		{"base URL with path prefix", func(c *Config) { c.BaseURL = "https://platform.example/partner" }, ""},
		{"rate limit disabled", func(c *Config) { c.RatePerSecond = math.Inf(1) }, ""},
		{"empty base URL", func(c *Config) { c.BaseURL = "" }, "base URL is empty"},
		{"base URL without scheme", func(c *Config) { c.BaseURL = "platform.example" }, "scheme must be http or https"},
		{"base URL with ftp scheme", func(c *Config) { c.BaseURL = "ftp://platform.example" }, "scheme must be http or https"},
		{"base URL without host", func(c *Config) { c.BaseURL = "http://" }, "has no host"},
		{"base URL with credentials", func(c *Config) { c.BaseURL = "https://user:hunter2@platform.example" }, "must not carry credentials"},
		{"base URL with query", func(c *Config) { c.BaseURL = "https://platform.example/?a=b" }, "must not have a query"},
		{"unparsable base URL", func(c *Config) { c.BaseURL = "http://[::1" }, "base URL does not parse"},
		{"empty token", func(c *Config) { c.Token = "" }, "token is empty"},
		{"token with newline", func(c *Config) { c.Token = testToken + "\n" }, "token contains whitespace"},
		{"user agent version with space", func(c *Config) { c.UserAgentVersion = "1.0 beta" }, "user agent version"},
		{"user agent version with slash", func(c *Config) { c.UserAgentVersion = "1/2" }, "user agent version"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "timeout -1s is negative"},
		{"negative personalize timeout", func(c *Config) { c.PersonalizeTimeout = -time.Second }, "personalize timeout -1s is negative"},
		{"negative rate", func(c *Config) { c.RatePerSecond = -1 }, "rate per second"},
		{"NaN rate", func(c *Config) { c.RatePerSecond = math.NaN() }, "rate per second"},
		{"negative burst", func(c *Config) { c.Burst = -1 }, "burst -1 is negative"},
		{"negative concurrency", func(c *Config) { c.MaxConcurrency = -2 }, "max concurrency -2 is negative"},
		{"negative attempts", func(c *Config) { c.MaxAttempts = -1 }, "max attempts -1 is negative"},
		{"backoff base above max", func(c *Config) { c.BackoffBase = time.Minute; c.BackoffMax = time.Second }, "backoff base 1m0s exceeds backoff max 1s"},
		{"negative retry budget", func(c *Config) { c.RetryBudget = -1 }, "retry budget -1ns is negative"},
		{"negative user chunk", func(c *Config) { c.OrdersUserChunk = -5 }, "orders user chunk -5 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig()
			tt.mutate(&cfg)
			c, err := New(cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if c == nil {
					t.Fatal("New returned a nil client")
				}
				return
			}
			if err == nil {
				t.Fatalf("New accepted the config; want an error containing %q", tt.wantErr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("error %q does not contain %q", msg, tt.wantErr)
			}
			for _, secret := range []string{testToken, "hunter2"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error reveals a secret: %q", msg)
				}
			}
		})
	}
	t.Run("several problems are all reported", func(t *testing.T) {
		_, err := New(Config{Burst: -1})
		if err == nil {
			t.Fatal("New accepted an empty config")
		}
		for _, want := range []string{"base URL is empty", "token is empty", "burst -1 is negative"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
	})
}

func TestConfigDefaults(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1", Token: testToken})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	got := c.cfg
	checks := []struct {
		name      string
		got, want any
	}{
		{"user agent version", got.UserAgentVersion, DefaultUserAgentVersion},
		{"timeout", got.Timeout, DefaultTimeout},
		{"personalize timeout", got.PersonalizeTimeout, DefaultPersonalizeTimeout},
		{"rate", got.RatePerSecond, DefaultRatePerSecond},
		{"burst", got.Burst, DefaultBurst},
		{"concurrency", got.MaxConcurrency, DefaultMaxConcurrency},
		{"attempts", got.MaxAttempts, DefaultMaxAttempts},
		{"backoff base", got.BackoffBase, DefaultBackoffBase},
		{"backoff max", got.BackoffMax, DefaultBackoffMax},
		{"max retry-after", got.MaxRetryAfter, DefaultMaxRetryAfter},
		{"retry budget", got.RetryBudget, DefaultRetryBudget},
		{"orders user chunk", got.OrdersUserChunk, DefaultOrdersUserChunk},
		{"max response bytes", got.MaxResponseBytes, int64(DefaultMaxResponseBytes)},
		{"user agent header", c.ua, "hrsync/dev"},
		{"base ends with a slash", c.base, "http://127.0.0.1:1/"},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			if ch.got != ch.want {
				t.Errorf("got %v, want %v", ch.got, ch.want)
			}
		})
	}
	t.Run("personalize timeout is well over 20s", func(t *testing.T) {
		if got.PersonalizeTimeout <= 20*time.Second || got.PersonalizeTimeout <= got.Timeout {
			t.Errorf("personalize timeout %s, timeout %s", got.PersonalizeTimeout, got.Timeout)
		}
	})
	t.Run("caller's HTTP client is copied, not changed", func(t *testing.T) {
		hc := &http.Client{Timeout: time.Minute}
		cfg := validConfig()
		cfg.HTTPClient = hc
		c, err := New(cfg)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if hc.CheckRedirect != nil {
			t.Error("New set CheckRedirect on the caller's client")
		}
		if c.http == hc || c.http.Timeout != time.Minute || c.http.CheckRedirect == nil {
			t.Errorf("client's HTTP client: same=%t timeout=%s redirect check=%t", c.http == hc, c.http.Timeout, c.http.CheckRedirect != nil)
		}
	})
}

func TestConfigRedactsToken(t *testing.T) {
	cfg := validConfig()
	cfg.BaseURL = "https://platform.example/partner"
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	type holder struct {
		Cfg    Config
		Client *Client
	}
	formats := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"}
	for _, f := range formats {
		t.Run("config "+f, func(t *testing.T) {
			assertNoSecret(t, fmt.Sprintf(f, cfg))
			assertNoSecret(t, fmt.Sprintf(f, &cfg))
		})
		t.Run("client "+f, func(t *testing.T) {
			assertNoSecret(t, fmt.Sprintf(f, c))
			assertNoSecret(t, fmt.Sprintf(f, *c))
		})
		t.Run("nested "+f, func(t *testing.T) {
			assertNoSecret(t, fmt.Sprintf(f, holder{Cfg: cfg, Client: c}))
		})
	}
	t.Run("String says the token is set", func(t *testing.T) {
		s := cfg.String()
		if !strings.Contains(s, redacted) || !strings.Contains(s, "platform.example/partner") {
			t.Errorf("String() = %s", s)
		}
	})
	t.Run("zap", func(t *testing.T) {
		var buf bytes.Buffer
		logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel))
		logger.Info("config", zap.Any("config", cfg), zap.Object("object", cfg), zap.Stringer("stringer", cfg), zap.Any("client", c))
		_ = logger.Sync()
		assertNoSecret(t, buf.String())
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %v", err)
		}
		if obj, ok := line["object"].(map[string]any); !ok || obj["tokenSet"] != true {
			t.Errorf("logged config = %v", line["object"])
		}
	})
}

// assertNoSecret fails when s holds the test token. It does not print s,
// which is exactly what must not reach test output if it does.
func assertNoSecret(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(s, testToken) {
		t.Errorf("output of %d bytes contains the token", len(s))
	}
}
