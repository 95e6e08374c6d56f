// Package kubernetes holds hrsync's Kubernetes manifests (a CronJob running
// one cycle at a time, a Deployment running the daemon, their ConfigMap,
// an example Secret and a volume claim) and the test that parses them and
// checks what a platform engineer relies on.
package kubernetes
