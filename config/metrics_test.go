package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestMetricsPushgateway(t *testing.T) {
	const password = "pgw-s3cr3t"
	t.Run("unset pushes nothing", func(t *testing.T) {
		cfg := mustLoad(t, minimal, nil)
		if cfg.Metrics.Pushgateway.Value() != "" {
			t.Errorf("pushgateway = %q", cfg.Metrics.Pushgateway.Value())
		}
	})
	t.Run("from the file, its password masked in every printed form", func(t *testing.T) {
		cfg := mustLoad(t, minimal+"metrics:\n  pushgateway: http://pusher:"+password+"@pgw.example.test:9091\n", nil)
		if cfg.Metrics.Pushgateway.Value() != "http://pusher:"+password+"@pgw.example.test:9091" {
			t.Errorf("pushgateway = %q", cfg.Metrics.Pushgateway.Value())
		}
		js, err := json.Marshal(cfg.Metrics)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{fmt.Sprint(cfg.Metrics), fmt.Sprintf("%+v", cfg), string(js)} {
			if strings.Contains(s, password) {
				t.Errorf("the password prints: %s", s)
			}
		}
	})
	t.Run("HRSYNC_METRICS_PUSHGATEWAY over the file", func(t *testing.T) {
		cfg := mustLoad(t, minimal+"metrics:\n  pushgateway: http://file.example.test:9091\n",
			map[string]string{EnvPushgateway: "https://env.example.test"})
		if cfg.Metrics.Pushgateway.Value() != "https://env.example.test" {
			t.Errorf("pushgateway = %q", cfg.Metrics.Pushgateway.Value())
		}
	})
	t.Run("a token file relative to the configuration", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "pgw-token", " tok-value\n")
		cfg, err := Load(writeFile(t, dir, "hrsync.yaml", minimal+"metrics:\n  pushgateway: http://pgw:9091\n  pushgatewayTokenFile: pgw-token\n"), noEnv, testKinds, testDialects)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Metrics.PushgatewayToken.Value() != "tok-value" {
			t.Errorf("token = %q", cfg.Metrics.PushgatewayToken.Value())
		}
	})
	t.Run("not an http URL", func(t *testing.T) {
		for _, bad := range []string{"pgw.example.test:9091", "ftp://pgw.example.test", "http://"} {
			_, err := load(t, minimal+"metrics:\n  pushgateway: "+bad+"\n", nil)
			if err == nil || !strings.Contains(err.Error(), "metrics.pushgateway") {
				t.Errorf("%q: err = %v, want a problem at metrics.pushgateway", bad, err)
			}
		}
	})
	t.Run("a token file that cannot be read", func(t *testing.T) {
		_, err := load(t, minimal+"metrics:\n  pushgatewayTokenFile: /nonexistent/pgw-token\n", nil)
		if err == nil || !strings.Contains(err.Error(), "metrics.pushgatewayTokenFile") {
			t.Errorf("err = %v, want a problem at metrics.pushgatewayTokenFile", err)
		}
	})
}
