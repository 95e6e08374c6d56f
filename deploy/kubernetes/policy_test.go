package kubernetes_test

// Checks of the CronJob's podFailurePolicy (played against each exit code
// of hrsync as the Job controller plays it) and of the NetworkPolicy.

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// podEnd is how a pod of the Job ended: the exit code of its container,
// and whether Kubernetes disrupted it (eviction, preemption, deletion).
type podEnd struct {
	exitCode  int32
	disrupted bool
}

// noRule is what policyAction answers when no rule matches: the Job
// controller then counts the failure towards backoffLimit.
const noRule = "no rule (counted)"

// policyAction plays the rules in order as the Job controller does and
// returns the action of the first that matches a failed pod of the
// container named container.
func policyAction(p *batchv1.PodFailurePolicy, container string, end podEnd) string {
	for _, r := range p.Rules {
		if oc := r.OnExitCodes; oc != nil {
			if oc.ContainerName != nil && *oc.ContainerName != container || end.exitCode == 0 {
				continue
			}
			in := slices.Contains(oc.Values, end.exitCode)
			if in == (oc.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
				return string(r.Action)
			}
			continue
		}
		for _, pc := range r.OnPodConditions {
			status := pc.Status
			if status == "" {
				status = corev1.ConditionTrue
			}
			if end.disrupted && pc.Type == corev1.DisruptionTarget && status == corev1.ConditionTrue {
				return string(r.Action)
			}
		}
	}
	return noRule
}

// checkFailurePolicy checks the policy is one the API accepts and that it
// retries only what a retry can fix (docs/operations.md, "Exit codes").
func checkFailurePolicy(t *testing.T, p *batchv1.PodFailurePolicy, container string) {
	t.Helper()
	if p == nil {
		t.Fatal("the Job has no podFailurePolicy: every failure would be retried alike")
	}
	if len(p.Rules) == 0 || len(p.Rules) > 20 {
		t.Fatalf("%d rules, want 1 to 20", len(p.Rules))
	}
	for i, r := range p.Rules {
		if (r.OnExitCodes == nil) == (len(r.OnPodConditions) == 0) {
			t.Errorf("rule %d: want exactly one of onExitCodes and onPodConditions", i)
		}
		if oc := r.OnExitCodes; oc != nil {
			if oc.ContainerName == nil || *oc.ContainerName != container {
				t.Errorf("rule %d: containerName %v, want %s", i, oc.ContainerName, container)
			}
			if len(oc.Values) == 0 || !slices.IsSorted(oc.Values) || len(slices.Compact(slices.Clone(oc.Values))) != len(oc.Values) ||
				oc.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(oc.Values, 0) {
				t.Errorf("rule %d: values %v: the API wants them ordered, distinct, and no 0 under In", i, oc.Values)
			}
		}
	}
	for _, c := range []struct {
		end  podEnd
		want string
		why  string
	}{
		{podEnd{exitCode: 1}, "Count", "1 failed: a retry may succeed, within backoffLimit"},
		{podEnd{exitCode: 2}, "FailJob", "2 configuration: a retry fails the same way"},
		{podEnd{exitCode: 3}, "FailJob", "3 safeguard: an operator decides"},
		{podEnd{exitCode: 4}, "FailJob", "4 attention: a retry would end Complete and lose the warning"},
		{podEnd{exitCode: 5}, "FailJob", "5 locked: the run holding the lock does the work"},
		{podEnd{exitCode: 137}, noRule, "an OOM kill is counted by default"},
		{podEnd{exitCode: 1, disrupted: true}, "Ignore", "a disrupted pod is run again, uncounted, whatever its exit"},
		{podEnd{exitCode: 4, disrupted: true}, "Ignore", "a disrupted pod is run again, uncounted, whatever its exit"},
		{podEnd{exitCode: 143, disrupted: true}, "Ignore", "a disrupted pod is run again, uncounted, whatever its exit"},
	} {
		if got := policyAction(p, container, c.end); got != c.want {
			t.Errorf("exit %d (disrupted %v): %s, want %s (%s)", c.end.exitCode, c.end.disrupted, got, c.want, c.why)
		}
	}
}

// Ports the pods may reach.
const (
	portDNS      = 53
	portHTTPS    = 443
	portPostgres = 5432
	portHTTP     = 9090
	portPushgate = 9091
)

// privateRanges are the ranges the rule to the platform must leave out:
// the cluster's and the cloud's own networks and the metadata endpoint.
var privateRanges = []string{"10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"}

// checkNetworkPolicy wants the policy to select every pod of hrsync and to
// let them reach DNS, the platform over HTTPS, when wantDatabase the
// PostgreSQL store, and when the build has CronJobs the Pushgateway they
// push their metrics to; nothing else. Ingress only on the HTTP port.
func checkNetworkPolicy(t *testing.T, objs objects, wantDatabase bool) {
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
	for i, r := range np.Spec.Ingress {
		if len(r.Ports) == 0 || slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port == nil || p.Port.IntValue() != portHTTP }) {
			t.Errorf("ingress rule %d: ports %v, want %d alone", i, r.Ports, portHTTP)
		}
	}
	seen := map[int]bool{}
	for i, r := range np.Spec.Egress {
		if len(r.To) == 0 || len(r.Ports) == 0 {
			t.Errorf("egress rule %d allows every destination or every port", i)
			continue
		}
		for _, p := range r.Ports {
			port := 0
			if p.Port != nil {
				port = p.Port.IntValue()
			}
			seen[port] = true
			checkEgressPeers(t, i, port, r.To)
		}
	}
	for _, port := range []int{portDNS, portHTTPS} {
		if !seen[port] {
			t.Errorf("no egress rule for port %d", port)
		}
	}
	if seen[portPostgres] != wantDatabase {
		t.Errorf("egress to PostgreSQL (%d) allowed: %v, want %v", portPostgres, seen[portPostgres], wantDatabase)
	}
	if wantPush := len(objs.cronJobs) > 0; seen[portPushgate] != wantPush {
		t.Errorf("egress to the Pushgateway (%d) allowed: %v, want %v (CronJobs push their metrics)", portPushgate, seen[portPushgate], wantPush)
	}
}

// checkEgressPeers checks the destinations of an egress rule for its port.
func checkEgressPeers(t *testing.T, rule, port int, to []networkingv1.NetworkPolicyPeer) {
	t.Helper()
	for _, peer := range to {
		switch port {
		case portDNS:
			if peer.PodSelector == nil || peer.PodSelector.MatchLabels["k8s-app"] != "kube-dns" || peer.IPBlock != nil {
				t.Errorf("egress rule %d: DNS to %+v, want the cluster's resolver (k8s-app=kube-dns) alone", rule, peer)
			}
		case portHTTPS:
			if peer.IPBlock == nil {
				t.Errorf("egress rule %d: HTTPS to %+v, want public addresses (an ipBlock)", rule, peer)
				continue
			}
			for _, r := range privateRanges {
				if !slices.Contains(peer.IPBlock.Except, r) {
					t.Errorf("egress rule %d: HTTPS to %s does not leave out %s", rule, peer.IPBlock.CIDR, r)
				}
			}
		case portPostgres, portPushgate:
			if peer.PodSelector == nil && peer.IPBlock == nil || peer.PodSelector != nil && len(peer.PodSelector.MatchLabels) == 0 {
				t.Errorf("egress rule %d: port %d to every pod of the selected namespaces", rule, port)
			}
		default:
			t.Errorf("egress rule %d allows port %d: only DNS, the platform, the database and the Pushgateway", rule, port)
		}
	}
}
