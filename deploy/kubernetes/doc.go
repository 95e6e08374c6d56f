// Package kubernetes holds hrsync's Kubernetes manifests, a kustomize base
// (base/: the daemon's Deployment, a ServiceAccount, a NetworkPolicy, a
// Service; base/cronjob/: the CronJob), two overlays
// (overlays/sqlite-single, overlays/postgres-fleet) and the components an
// overlay lists (components/egress-*: a backend's egress rule;
// components/scim: the SCIM endpoint's port, Service and ingress rule),
// with the tests that
// build them with kustomize, decode them strictly into the Kubernetes API
// types and check what a platform engineer relies on.
package kubernetes
