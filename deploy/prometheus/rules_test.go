package prometheus_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"hrsync/deploy/prometheus"
)

const (
	rulesFile     = "hrsync-rules.yaml"
	rulesTestFile = "hrsync-rules.test.yaml"
	ruleCRFile    = "prometheusrule.yaml"
)

// promtool runs promtool with args in this folder and fails the test when
// promtool is missing (CI installs the Debian package prometheus) or when
// it fails.
func promtool(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is needed to check the rules (Debian package prometheus): %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestPromtoolCheckRules parses every rule with Prometheus' own checker.
func TestPromtoolCheckRules(t *testing.T) {
	promtool(t, "check", "rules", rulesFile)
}

// TestPromtoolTestRules runs the alerts' unit tests.
func TestPromtoolTestRules(t *testing.T) {
	promtool(t, "test", "rules", rulesTestFile)
}

// ruleGroups is the part of a rules file or PrometheusRule spec that the
// comparison reads, decoded strictly: a field Prometheus does not know
// fails.
type ruleGroups struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Record      string            `json:"record,omitempty"`
			Alert       string            `json:"alert,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

// prometheusRule is a PrometheusRule (monitoring.coreos.com/v1), strictly.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec ruleGroups `json:"spec"`
}

// TestPrometheusRuleIsThePlainFile checks that prometheusrule.yaml is what
// go generate renders from the plain file, and that its spec decodes to
// the same groups.
func TestPrometheusRuleIsThePlainFile(t *testing.T) {
	plain, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(ruleCRFile)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := prometheus.RenderPrometheusRule(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rendered, committed) {
		t.Errorf("%s is stale: run go generate ./deploy/prometheus", ruleCRFile)
	}
	var want ruleGroups
	if err := yaml.UnmarshalStrict(plain, &want); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	var cr prometheusRule
	if err := yaml.UnmarshalStrict(committed, &cr); err != nil {
		t.Fatalf("%s: %v", ruleCRFile, err)
	}
	if cr.APIVersion != "monitoring.coreos.com/v1" || cr.Kind != "PrometheusRule" || cr.Metadata.Name == "" {
		t.Errorf("%s: %s %s %q, want a named monitoring.coreos.com/v1 PrometheusRule", ruleCRFile, cr.APIVersion, cr.Kind, cr.Metadata.Name)
	}
	if len(want.Groups) == 0 || !reflect.DeepEqual(cr.Spec, want) {
		t.Errorf("the PrometheusRule's groups differ from %s", rulesFile)
	}
	// The spec, written back as a plain file, passes promtool too.
	spec, err := yaml.Marshal(cr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, spec, 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", path)
}

// TestRenderPrometheusRuleRefusesOtherFiles checks the renderer's one
// error: a file that is not a rules file.
func TestRenderPrometheusRuleRefusesOtherFiles(t *testing.T) {
	if _, err := prometheus.RenderPrometheusRule([]byte("# a comment\nscrape_configs: []\n")); err == nil {
		t.Error("a file without groups: rendered")
	}
}
