package prometheus

import (
	"bytes"
	"errors"
	"strings"
)

// ruleHeader opens the PrometheusRule that RenderPrometheusRule writes.
const ruleHeader = `# GENERATED from hrsync-rules.yaml by ` + "`go generate ./deploy/prometheus`" + `: edit that
# file, not this one. hrsync's alerts as a Prometheus Operator PrometheusRule;
# the Prometheus that should load it selects it by its labels (ruleSelector).
# What each alert means and what to do: docs/operations.md, "Alerts".
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: hrsync
  labels:
    app.kubernetes.io/name: hrsync
    app.kubernetes.io/part-of: hrsync
spec:
`

// RenderPrometheusRule returns a PrometheusRule whose spec is the plain
// rules file's document, comments and all: the file's opening comment is
// left out and every other line is indented under spec.
func RenderPrometheusRule(plain []byte) ([]byte, error) {
	lines := strings.Split(strings.TrimRight(string(plain), "\n"), "\n")
	start := 0
	for start < len(lines) && (strings.HasPrefix(lines[start], "#") || strings.TrimSpace(lines[start]) == "") {
		start++
	}
	if start == len(lines) || !strings.HasPrefix(lines[start], "groups:") {
		return nil, errors.New("render prometheus rule: the rules file does not start with groups: after its comment")
	}
	var out bytes.Buffer
	out.WriteString(ruleHeader)
	for _, l := range lines[start:] {
		if l != "" {
			out.WriteString("  ")
		}
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}
