package kubernetes_test

// Checks of the SCIM endpoint's exposure (components/scim) against the
// configuration the pods load: when it sets scim.listen, the daemon's
// container has a port named scim on that port, a Service of its own
// exposes that port alone (never the metrics port), and one ingress rule
// lets the ingress controller's namespace, and nothing else, reach it; when
// it does not, none of these exists.

import (
	"maps"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// ingressNamespace is the namespace of the ingress controller that may
// reach the SCIM port, as components/scim names it.
const ingressNamespace = "ingress-nginx"

// scimPortName names the daemon's SCIM port in the container and Service.
const scimPortName = "scim"

// scimListen reads scim.listen from a configuration ("" when unset).
func scimListen(t *testing.T, body []byte) string {
	t.Helper()
	var f struct {
		SCIM struct {
			Listen string `json:"listen"`
		} `json:"scim"`
	}
	if err := yaml.Unmarshal(body, &f); err != nil {
		t.Fatalf("configuration: %v", err)
	}
	return f.SCIM.Listen
}

// checkSCIMIngress wants the ingress rule of the SCIM port to admit the
// ingress controller's namespace alone.
func checkSCIMIngress(t *testing.T, i int, r networkingv1.NetworkPolicyIngressRule) {
	t.Helper()
	if len(r.From) == 0 {
		t.Errorf("ingress rule %d admits every source to the SCIM port", i)
	}
	for _, peer := range r.From {
		if peer.IPBlock != nil || peer.PodSelector != nil || peer.NamespaceSelector == nil ||
			!maps.Equal(peer.NamespaceSelector.MatchLabels, map[string]string{namespaceNameLabel: ingressNamespace}) ||
			len(peer.NamespaceSelector.MatchExpressions) != 0 {
			t.Errorf("ingress rule %d admits %+v to the SCIM port: want the ingress controller's namespace %s alone", i, peer, ingressNamespace)
		}
	}
}

// checkSCIMExposure wants the SCIM port in the daemon's containers and one
// Service of its own when the configuration serves SCIM on port (0: it
// does not), and neither otherwise; no Service exposes the metrics port
// and the SCIM port together.
func checkSCIMExposure(t *testing.T, objs objects, port int) {
	t.Helper()
	for _, d := range objs.deployments {
		var got []int32
		for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
			if p.Name == scimPortName {
				got = append(got, p.ContainerPort)
			}
		}
		switch {
		case port == 0 && len(got) > 0:
			t.Errorf("Deployment %s has a SCIM port, but the configuration sets no scim.listen", d.Name)
		case port != 0 && (len(got) != 1 || int(got[0]) != port):
			t.Errorf("Deployment %s: SCIM container ports %v, want %d (scim.listen)", d.Name, got, port)
		}
	}
	var scimServices []string
	for _, s := range objs.services {
		var names []string
		for _, p := range s.Spec.Ports {
			names = append(names, p.Name)
			if p.Name == scimPortName && (p.TargetPort.String() != scimPortName || int(p.Port) != port) {
				t.Errorf("Service %s: port %+v, want %d to the container's port %s", s.Name, p, port, scimPortName)
			}
		}
		if !slices.Contains(names, scimPortName) {
			continue
		}
		scimServices = append(scimServices, s.Name)
		if len(names) != 1 {
			t.Errorf("Service %s exposes the SCIM port with %v: the Ingress's backend must expose SCIM alone, never /metrics", s.Name, names)
		}
		if s.Labels["app.kubernetes.io/component"] == "daemon" {
			t.Errorf("Service %s is labelled as the daemon's: the ServiceMonitor would scrape it", s.Name)
		}
	}
	if want := map[bool]int{true: 1, false: 0}[port != 0]; len(scimServices) != want {
		t.Errorf("Services exposing SCIM: %v, want %d (scim.listen %v)", scimServices, want, port)
	}
}
