// Package prometheus holds hrsync's alerting rules for Prometheus: the plain
// rules file hrsync-rules.yaml, its promtool unit tests, the same rules as a
// Prometheus Operator PrometheusRule (prometheusrule.yaml, rendered from the
// plain file by RenderPrometheusRule), and a PodMonitor and a ServiceMonitor
// for the daemon. Its tests run `promtool check rules` and `promtool test
// rules`, and check that the PrometheusRule holds the plain file's rules.
package prometheus

//go:generate go run ./genrule hrsync-rules.yaml prometheusrule.yaml
