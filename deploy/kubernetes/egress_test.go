package kubernetes_test

// Checks of the NetworkPolicy against the configuration the pods load:
// ingress to the metrics port only from the monitoring namespace or from
// pods carrying the documented label, and egress to exactly the backends
// the configuration names (DNS, the platform, the PostgreSQL store, an
// SFTP or S3 drop folder, the SMTP server, the Pushgateway), each to a
// narrow destination.

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// Ports of the backends.
const (
	portDNS      = 53
	portHTTPS    = 443
	portMetrics  = 9090
	portPostgres = 5432
)

// scraperLabel is the label (with the value "true") that lets a pod of
// hrsync's namespace scrape its metrics; monitoringNamespace is the
// namespace whose pods may. Both are documented in base/networkpolicy.yaml.
const (
	scraperLabel        = "hrsync/metrics-scraper"
	monitoringNamespace = "monitoring"
	namespaceNameLabel  = "kubernetes.io/metadata.name"
)

// privateRanges are the ranges the rule to the platform must leave out:
// the cluster's and the cloud's own networks and the metadata endpoint.
var privateRanges = []string{"10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"}

// destination is a backend the configuration names: what it is, and the
// host and port the pods connect to.
type destination struct {
	what string
	host string
	port int
}

// hostPort splits a URL's host and port, with the scheme's default port.
func hostPort(t *testing.T, what, raw string) destination {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("%s %q is not a URL", what, raw)
	}
	port := map[string]int{"https": 443, "http": 80, "postgres": portPostgres, "postgresql": portPostgres}[u.Scheme]
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	if port == 0 {
		t.Fatalf("%s %q: no port and no known scheme", what, raw)
	}
	return destination{what: what, host: u.Hostname(), port: port}
}

// configDestinations reads a configuration the way the backends use it
// and returns every destination it names; storeURL is the value of the
// Secret's store-url, read when the configuration names store.urlFile.
func configDestinations(t *testing.T, body []byte, storeURL string) []destination {
	t.Helper()
	var f struct {
		Store struct {
			URL     string `json:"url"`
			URLFile string `json:"urlFile"`
		} `json:"store"`
		API struct {
			BaseURL string `json:"baseUrl"`
		} `json:"api"`
		Metrics struct {
			Pushgateway string `json:"pushgateway"`
		} `json:"metrics"`
		Notify struct {
			SMTP struct {
				Host string `json:"host"`
				Port int    `json:"port"`
			} `json:"smtp"`
		} `json:"notify"`
		Tenants []struct {
			Source struct {
				CSV *struct {
					Type string `json:"type"`
					SFTP *struct {
						Host string `json:"host"`
						Port int    `json:"port"`
					} `json:"sftp"`
					S3 *struct {
						Endpoint string `json:"endpoint"`
					} `json:"s3"`
				} `json:"csv"`
			} `json:"source"`
		} `json:"tenants"`
	}
	if err := yaml.Unmarshal(body, &f); err != nil {
		t.Fatalf("configuration: %v", err)
	}
	dests := []destination{{what: "DNS", port: portDNS}, hostPort(t, "api.baseUrl", f.API.BaseURL)}
	switch {
	case f.Store.URLFile != "":
		dests = append(dests, hostPort(t, "store-url", storeURL))
	case strings.HasPrefix(f.Store.URL, "postgres"):
		dests = append(dests, hostPort(t, "store.url", f.Store.URL))
	}
	if f.Metrics.Pushgateway != "" {
		dests = append(dests, hostPort(t, "metrics.pushgateway", f.Metrics.Pushgateway))
	}
	if f.Notify.SMTP.Host != "" {
		port := f.Notify.SMTP.Port
		if port == 0 {
			port = 587
		}
		dests = append(dests, destination{what: "notify.smtp", host: f.Notify.SMTP.Host, port: port})
	}
	for i, tn := range f.Tenants {
		csv := tn.Source.CSV
		switch {
		case csv == nil:
		case csv.Type == "sftp" && csv.SFTP != nil:
			port := csv.SFTP.Port
			if port == 0 {
				port = 22
			}
			dests = append(dests, destination{what: fmt.Sprintf("tenants[%d] SFTP", i), host: csv.SFTP.Host, port: port})
		case csv.Type == "s3" && csv.S3 != nil:
			dests = append(dests, hostPort(t, fmt.Sprintf("tenants[%d] S3 endpoint", i), csv.S3.Endpoint))
		}
	}
	return dests
}

// builtConfig returns the hrsync.yaml of the build's hrsync-config.
func builtConfig(t *testing.T, objs objects) []byte {
	t.Helper()
	for _, cm := range objs.configMaps {
		if strings.HasPrefix(cm.Name, "hrsync-config") {
			if body, ok := cm.Data["hrsync.yaml"]; ok {
				return []byte(body)
			}
		}
	}
	t.Fatal("the build holds no hrsync-config ConfigMap with hrsync.yaml")
	return nil
}

// checkNetworkPolicy wants one policy selecting every pod of hrsync, with
// the documented ingress and an egress rule for each destination of the
// configuration the pods load, and for nothing else.
func checkNetworkPolicy(t *testing.T, objs objects) {
	t.Helper()
	if len(objs.networkPolicies) != 1 {
		t.Fatalf("%d NetworkPolicies, want 1", len(objs.networkPolicies))
	}
	np := objs.networkPolicies[0]
	var pods []map[string]string
	for _, d := range objs.deployments {
		pods = append(pods, d.Spec.Template.Labels)
	}
	for _, cj := range objs.cronJobs {
		pods = append(pods, cj.Spec.JobTemplate.Spec.Template.Labels)
	}
	for _, labels := range pods {
		for k, v := range np.Spec.PodSelector.MatchLabels {
			if labels[k] != v {
				t.Errorf("the NetworkPolicy does not select pods labelled %v", labels)
			}
		}
	}
	if len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Error("the NetworkPolicy selects every pod of the namespace")
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("policyTypes %v, want Ingress and Egress", np.Spec.PolicyTypes)
	}
	scimPort := int(listenPort(scimListen(t, builtConfig(t, objs))))
	checkIngress(t, np.Spec.Ingress, scimPort)
	checkSCIMExposure(t, objs, scimPort)

	dests := configDestinations(t, builtConfig(t, objs), exampleSecret(t).StringData["store-url"])
	if len(objs.cronJobs) > 0 && !slices.ContainsFunc(dests, func(d destination) bool { return d.what == "metrics.pushgateway" }) {
		t.Error("the build has CronJobs but the configuration names no metrics.pushgateway: their runs' metrics would be lost")
	}
	want := map[int][]destination{}
	for _, d := range dests {
		want[d.port] = append(want[d.port], d)
	}
	seen := map[int]bool{}
	for i, r := range np.Spec.Egress {
		if len(r.To) == 0 || len(r.Ports) == 0 {
			t.Errorf("egress rule %d allows every destination or every port", i)
			continue
		}
		for _, p := range r.Ports {
			if p.Port == nil || p.EndPort != nil {
				t.Errorf("egress rule %d: a port range or every port", i)
				continue
			}
			port := p.Port.IntValue()
			seen[port] = true
			ds, ok := want[port]
			if !ok {
				t.Errorf("egress rule %d allows port %d, which no backend of the configuration uses", i, port)
				continue
			}
			for _, d := range ds {
				checkEgressPeers(t, i, d, r.To)
			}
		}
	}
	for _, port := range slices.Sorted(maps.Keys(want)) {
		if !seen[port] {
			t.Errorf("no egress rule for port %d, which %s uses", port, want[port][0].what)
		}
	}
}

// checkIngress wants every ingress rule on the metrics port alone, from
// the monitoring namespace or the labelled pods of hrsync's namespace,
// and both of those allowed; or, when the configuration serves SCIM on
// scimPort (0: it does not), on that port alone, from the ingress
// controller's namespace alone (checkSCIMIngress).
func checkIngress(t *testing.T, rules []networkingv1.NetworkPolicyIngressRule, scimPort int) {
	t.Helper()
	var fromMonitoring, fromLabelled, scim bool
	for i, r := range rules {
		if scimPort != 0 && onlyPort(r.Ports, scimPort) {
			checkSCIMIngress(t, i, r)
			scim = true
			continue
		}
		if !onlyPort(r.Ports, portMetrics) {
			t.Errorf("ingress rule %d: ports %v, want %d alone (or the SCIM port alone, when scim.listen is set)", i, r.Ports, portMetrics)
		}
		if len(r.From) == 0 {
			t.Errorf("ingress rule %d admits every source", i)
		}
		for _, peer := range r.From {
			switch {
			case peer.IPBlock != nil:
				t.Errorf("ingress rule %d admits addresses %s: scrapers are named by namespace or label", i, peer.IPBlock.CIDR)
			case peer.NamespaceSelector != nil && peer.PodSelector == nil &&
				maps.Equal(peer.NamespaceSelector.MatchLabels, map[string]string{namespaceNameLabel: monitoringNamespace}) &&
				len(peer.NamespaceSelector.MatchExpressions) == 0:
				fromMonitoring = true
			case peer.NamespaceSelector == nil && peer.PodSelector != nil &&
				maps.Equal(peer.PodSelector.MatchLabels, map[string]string{scraperLabel: "true"}) &&
				len(peer.PodSelector.MatchExpressions) == 0:
				fromLabelled = true
			default:
				t.Errorf("ingress rule %d admits %+v: want the namespace %s or pods labelled %s=true", i, peer, monitoringNamespace, scraperLabel)
			}
		}
	}
	if !fromMonitoring || !fromLabelled {
		t.Errorf("ingress from the namespace %s: %v, from pods labelled %s=true: %v; want both", monitoringNamespace, fromMonitoring, scraperLabel, fromLabelled)
	}
	if scimPort != 0 && !scim {
		t.Errorf("the configuration serves SCIM on port %d, but no ingress rule lets the ingress controller reach it", scimPort)
	}
}

// onlyPort tells whether ports name port, and only it.
func onlyPort(ports []networkingv1.NetworkPolicyPort, port int) bool {
	return len(ports) > 0 && !slices.ContainsFunc(ports, func(p networkingv1.NetworkPolicyPort) bool {
		return p.Port == nil || p.Port.IntValue() != port || p.EndPort != nil
	})
}

// checkEgressPeers checks the destinations of an egress rule for the port
// a backend uses.
func checkEgressPeers(t *testing.T, rule int, d destination, to []networkingv1.NetworkPolicyPeer) {
	t.Helper()
	for _, peer := range to {
		switch {
		case d.port == portDNS:
			if peer.PodSelector == nil || peer.PodSelector.MatchLabels["k8s-app"] != "kube-dns" || peer.IPBlock != nil {
				t.Errorf("egress rule %d: DNS to %+v, want the cluster's resolver (k8s-app=kube-dns) alone", rule, peer)
			}
		case d.port == portHTTPS && !inCluster(d.host):
			checkPublicOnly(t, rule, d, peer)
		case peer.IPBlock != nil:
			prefix, err := netip.ParsePrefix(peer.IPBlock.CIDR)
			if err != nil || prefix.Bits() < 24 && prefix.Addr().Is4() {
				t.Errorf("egress rule %d: %s (port %d) to %s, want one server's address (a /24 or narrower)", rule, d.what, d.port, peer.IPBlock.CIDR)
			}
		default:
			checkInCluster(t, rule, d, peer)
		}
	}
}

// checkPublicOnly wants an HTTPS destination on the internet reached by
// public addresses only.
func checkPublicOnly(t *testing.T, rule int, d destination, peer networkingv1.NetworkPolicyPeer) {
	t.Helper()
	if peer.IPBlock == nil {
		t.Errorf("egress rule %d: %s over HTTPS to %+v, want public addresses (an ipBlock)", rule, d.what, peer)
		return
	}
	for _, r := range privateRanges {
		if !slices.Contains(peer.IPBlock.Except, r) {
			t.Errorf("egress rule %d: HTTPS to %s does not leave out %s", rule, peer.IPBlock.CIDR, r)
		}
	}
}

// inCluster says whether host is a Service's name: "name" (hrsync's
// namespace), "name.namespace" or "name.namespace.svc[.cluster domain]".
func inCluster(host string) bool {
	if net.ParseIP(host) != nil {
		return false
	}
	parts := strings.Split(host, ".")
	return len(parts) <= 2 || parts[2] == "svc"
}

// checkInCluster wants a destination in the cluster reached by a pod
// selector with labels, in the namespace the host names (no namespace
// selector when the host names hrsync's own).
func checkInCluster(t *testing.T, rule int, d destination, peer networkingv1.NetworkPolicyPeer) {
	t.Helper()
	if peer.PodSelector == nil || len(peer.PodSelector.MatchLabels) == 0 {
		t.Errorf("egress rule %d: %s (port %d) to %+v: want the pods of one server (a podSelector with labels)", rule, d.what, d.port, peer)
		return
	}
	if !inCluster(d.host) {
		t.Errorf("egress rule %d: %s %s is outside the cluster, but the rule names pods", rule, d.what, d.host)
		return
	}
	parts := strings.Split(d.host, ".")
	ns := ""
	if len(parts) > 1 {
		ns = parts[1]
	}
	got := ""
	if peer.NamespaceSelector != nil {
		got = peer.NamespaceSelector.MatchLabels[namespaceNameLabel]
		if got == "" {
			t.Errorf("egress rule %d: %s (port %d) to every namespace matching %v", rule, d.what, d.port, peer.NamespaceSelector)
		}
	}
	if got != ns {
		t.Errorf("egress rule %d: %s is %s, in the namespace %q, but the rule allows pods of the namespace %q ('' is hrsync's)", rule, d.what, d.host, ns, got)
	}
}

// TestEgressOfEveryBackend builds testdata/every-backend, the base with
// every component and a configuration that uses each backend (the
// PostgreSQL store, SFTP and S3 drop folders, SMTP, the Pushgateway) and
// serves SCIM: the components add exactly the rules those backends need,
// and the SCIM endpoint's port, Service and ingress rule.
func TestEgressOfEveryBackend(t *testing.T) {
	objs := decodeAll(t, "every-backend", kustomize(t, filepath.Join("testdata", "every-backend")))
	checkNetworkPolicy(t, objs)
	if p := listenPort(scimListen(t, builtConfig(t, objs))); p != 8090 {
		t.Errorf("the test's configuration serves SCIM on port %d, want 8090 (components/scim)", p)
	}
	dests := configDestinations(t, builtConfig(t, objs), exampleSecret(t).StringData["store-url"])
	var ports []int
	for _, d := range dests {
		ports = append(ports, d.port)
	}
	slices.Sort(ports)
	if want := []int{22, 53, 443, 587, 5432, 9000, 9091}; !slices.Equal(slices.Compact(ports), want) {
		t.Errorf("the test's configuration names ports %v, want every backend's %v", ports, want)
	}
	// Every component is used here: a component added to components/ and
	// left out of the test fails it.
	entries, err := filepath.Glob(filepath.Join("components", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 {
		t.Errorf("components: %v, want the 5 egress components and scim, which this test builds", entries)
	}
}

// checkAntiAffinity wants the pods of a Deployment of several replicas
// kept on different nodes where the cluster has them.
func checkAntiAffinity(t *testing.T, spec corev1.PodSpec, labels map[string]string) {
	t.Helper()
	var terms []corev1.PodAffinityTerm
	if a := spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, term := range terms {
		if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector == nil || len(term.LabelSelector.MatchLabels) == 0 {
			continue
		}
		matches := true
		for k, v := range term.LabelSelector.MatchLabels {
			matches = matches && labels[k] == v
		}
		if matches {
			return
		}
	}
	t.Errorf("no pod anti-affinity on kubernetes.io/hostname that selects the replicas (labels %v): they may all land on one node", labels)
}
