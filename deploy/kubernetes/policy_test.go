package kubernetes_test

// Checks of the CronJob's podFailurePolicy (played against each exit code
// of hrsync as the Job controller plays it) and of the NetworkPolicy.

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
