// Package grafana holds hrsync's Grafana dashboard (hrsync.json: runs and
// outcomes, people created, grants applied and held, the platform API's
// latency, errors and rate-limit waits by endpoint, orders by status) and
// the test that checks its structure and parses every query with
// Prometheus' own parser (promtool).
package grafana
