package prometheus_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The fields of a PodMonitor or ServiceMonitor (monitoring.coreos.com/v1)
// that hrsync's use, decoded strictly: a misspelt or misplaced field fails,
// as the operator's schema would refuse it.
type (
	monitorMeta struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels,omitempty"`
	}
	labelSelector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	}
	scrapeEndpoint struct {
		Port        string `json:"port"`
		Path        string `json:"path"`
		Interval    string `json:"interval,omitempty"`
		HonorLabels bool   `json:"honorLabels"`
	}
	podMonitor struct {
		APIVersion string      `json:"apiVersion"`
		Kind       string      `json:"kind"`
		Metadata   monitorMeta `json:"metadata"`
		Spec       struct {
			Selector            labelSelector    `json:"selector"`
			PodMetricsEndpoints []scrapeEndpoint `json:"podMetricsEndpoints"`
		} `json:"spec"`
	}
	serviceMonitor struct {
		APIVersion string      `json:"apiVersion"`
		Kind       string      `json:"kind"`
		Metadata   monitorMeta `json:"metadata"`
		Spec       struct {
			Selector  labelSelector    `json:"selector"`
			Endpoints []scrapeEndpoint `json:"endpoints"`
		} `json:"spec"`
	}
	// builtObject is what the monitors are matched against in a build of
	// the manifests: labels and named ports.
	builtObject struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			Ports    []struct{ Name string } `json:"ports"`
			Template struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
				Spec struct {
					Containers []struct {
						Ports []struct{ Name string } `json:"ports"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
)

// daemonObjects builds the SQLite overlay (the daemon's pods and Service
// are the base's) and returns the daemon's Deployment and Service.
func daemonObjects(t *testing.T) (deployment, service builtObject) {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is needed to build the manifests the monitors select: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kubectl, "kustomize", filepath.Join("..", "kubernetes", "overlays", "sqlite-single")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v", err)
	}
	for doc := range bytes.SplitSeq(out, []byte("\n---\n")) {
		var o builtObject
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatal(err)
		}
		switch o.Kind {
		case "Deployment":
			deployment = o
		case "Service":
			service = o
		}
	}
	if deployment.Kind == "" || service.Kind == "" {
		t.Fatal("the build holds no daemon Deployment or Service")
	}
	return deployment, service
}

// selects reports whether every label of sel is among labels.
func selects(sel labelSelector, labels map[string]string) bool {
	for k, v := range sel.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return len(sel.MatchLabels) > 0
}

// checkEndpoints wants one endpoint on the named port, /metrics, with
// hrsync's labels kept.
func checkEndpoints(t *testing.T, eps []scrapeEndpoint, ports []struct{ Name string }) {
	t.Helper()
	if len(eps) != 1 {
		t.Fatalf("%d endpoints, want 1", len(eps))
	}
	ep := eps[0]
	if ep.Path != "/metrics" || !ep.HonorLabels {
		t.Errorf("endpoint %+v, want /metrics with honorLabels (hrsync's job label)", ep)
	}
	found := false
	for _, p := range ports {
		found = found || p.Name == ep.Port
	}
	if !found {
		t.Errorf("endpoint port %q is not a named port of the target (%v)", ep.Port, ports)
	}
}

// decodeStrict reads a file into out, refusing unknown fields.
func decodeStrict(t *testing.T, name string, out any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestMonitors checks that the PodMonitor selects the daemon's pods and the
// ServiceMonitor its Service, on the port that serves /metrics.
func TestMonitors(t *testing.T) {
	deployment, service := daemonObjects(t)
	t.Run("podmonitor", func(t *testing.T) {
		var pm podMonitor
		decodeStrict(t, "podmonitor.yaml", &pm)
		if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
			t.Fatalf("%s %s", pm.APIVersion, pm.Kind)
		}
		if !selects(pm.Spec.Selector, deployment.Spec.Template.Metadata.Labels) {
			t.Errorf("selector %v does not select the daemon's pods %v", pm.Spec.Selector.MatchLabels, deployment.Spec.Template.Metadata.Labels)
		}
		var ports []struct{ Name string }
		for _, c := range deployment.Spec.Template.Spec.Containers {
			ports = append(ports, c.Ports...)
		}
		checkEndpoints(t, pm.Spec.PodMetricsEndpoints, ports)
	})
	t.Run("servicemonitor", func(t *testing.T) {
		var sm serviceMonitor
		decodeStrict(t, "servicemonitor.yaml", &sm)
		if sm.APIVersion != "monitoring.coreos.com/v1" || sm.Kind != "ServiceMonitor" {
			t.Fatalf("%s %s", sm.APIVersion, sm.Kind)
		}
		if !selects(sm.Spec.Selector, service.Metadata.Labels) {
			t.Errorf("selector %v does not select the daemon's Service %v", sm.Spec.Selector.MatchLabels, service.Metadata.Labels)
		}
		checkEndpoints(t, sm.Spec.Endpoints, service.Spec.Ports)
	})
}
