package kubernetes_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"hrsync/config"
)

// dockerfileUID reads the numeric user the Dockerfile runs as.
func dockerfileUID(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^USER (\d+):(\d+)$`).FindStringSubmatch(string(b))
	if m == nil || m[1] != m[2] {
		t.Fatalf("the Dockerfile has no numeric USER uid:gid with gid = uid (the kubelet checks runAsNonRoot on a number)")
	}
	uid, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || uid == 0 {
		t.Fatalf("USER %s: want a non-zero number", m[1])
	}
	return uid
}

// TestOverlays builds each overlay with kustomize, decodes it strictly and
// checks what a platform engineer relies on.
func TestOverlays(t *testing.T) {
	uid := dockerfileUID(t)
	tags := map[string]bool{}
	for _, name := range overlays {
		t.Run(name, func(t *testing.T) {
			objs := buildOverlay(t, name)
			pc := podChecks{objs: objs, tag: imageTag(t, name), uid: uid}
			tags[pc.tag] = true
			checkServiceAccount(t, objs)
			checkNames(t, objs)
			checkNetworkPolicy(t, objs)
			for _, d := range objs.deployments {
				t.Run("deployment "+d.Name, func(t *testing.T) { checkDaemon(t, d, pc) })
			}
			for _, cj := range objs.cronJobs {
				t.Run("cronjob "+cj.Name, func(t *testing.T) { checkCronJob(t, cj, pc) })
			}
			switch name {
			case "sqlite-single":
				checkSQLiteSingle(t, objs)
			case "postgres-fleet":
				checkPostgresFleet(t, objs)
			}
		})
	}
	if len(tags) != 1 {
		t.Errorf("the overlays set different image tags: %v", tags)
	}
}

// checkNames checks what the API server checks of names and labels: DNS
// names, label syntax, and CronJob names short enough for the Jobs and
// pods named after them (52 characters).
func checkNames(t *testing.T, objs objects) {
	t.Helper()
	var metas []metav1.ObjectMeta
	for _, d := range objs.deployments {
		metas = append(metas, d.ObjectMeta, d.Spec.Template.ObjectMeta)
	}
	for _, cj := range objs.cronJobs {
		metas = append(metas, cj.ObjectMeta, cj.Spec.JobTemplate.Spec.Template.ObjectMeta)
		if len(cj.Name) > 52 {
			t.Errorf("CronJob %s: name over 52 characters", cj.Name)
		}
	}
	for _, o := range objs.configMaps {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range objs.claims {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range objs.services {
		metas = append(metas, o.ObjectMeta)
	}
	for _, m := range metas {
		if m.Name != "" {
			for _, e := range validation.IsDNS1123Subdomain(m.Name) {
				t.Errorf("name %q: %s", m.Name, e)
			}
		}
		for k, v := range m.Labels {
			for _, e := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
				t.Errorf("label %s=%s of %q: %s", k, v, m.Name, e)
			}
		}
	}
}

// checkServiceAccount wants the one ServiceAccount, without a token.
func checkServiceAccount(t *testing.T, objs objects) {
	t.Helper()
	if len(objs.serviceAccounts) != 1 || objs.serviceAccounts[0].Name != serviceAccountName {
		t.Fatalf("service accounts %v, want one named %s", objs.serviceAccounts, serviceAccountName)
	}
	if am := objs.serviceAccounts[0].AutomountServiceAccountToken; am == nil || *am {
		t.Error("the ServiceAccount does not set automountServiceAccountToken: false")
	}
}

// exitMargin is what a stopping daemon may take after its grace period:
// the stop of its HTTP server (bounded by 5 s in internal/daemon).
const exitMargin = 5 * time.Second

// checkDaemon checks the daemon's Deployment: its pod, the probes on the
// port http.listen serves, and a terminationGracePeriodSeconds that covers
// the daemon's --grace (its runs in flight drain, then those cut short
// commit) and the stop of its HTTP server after it (exitMargin), so that
// the kubelet's SIGKILL never lands on a draining run.
func checkDaemon(t *testing.T, d *appsv1.Deployment, pc podChecks) {
	t.Helper()
	pod := d.Spec.Template.Spec
	c := checkPod(t, pod, pc)
	if len(c.Args) == 0 || c.Args[0] != "daemon" {
		t.Errorf("args %v, want daemon ...", c.Args)
	}
	if len(c.Ports) == 0 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 9090 ||
		slices.ContainsFunc(c.Ports[1:], func(p corev1.ContainerPort) bool { return p.Name != scimPortName }) {
		t.Errorf("ports %+v, want http on 9090 (and only the SCIM port besides)", c.Ports)
	}
	for name, p := range map[string]struct {
		probe *corev1.Probe
		path  string
	}{"liveness": {c.LivenessProbe, "/healthz"}, "readiness": {c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET %s on the port http", name, p.probe, p.path)
		}
	}
	grace := config.DefaultDaemonGrace
	if i := slices.Index(c.Args, "--grace"); i >= 0 && i+1 < len(c.Args) {
		var err error
		if grace, err = time.ParseDuration(c.Args[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if tg := pod.TerminationGracePeriodSeconds; tg == nil || time.Duration(*tg)*time.Second < grace+exitMargin {
		t.Errorf("terminationGracePeriodSeconds %v must be at least the daemon's --grace %v and %v more", tg, grace, exitMargin)
	}
	labels := d.Spec.Template.Labels
	for k, v := range d.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("the selector's %s=%s is not a label of the pods", k, v)
		}
	}
}

// checkCronJob checks a CronJob: its schedule and concurrency, its pod,
// and what its podFailurePolicy does with each exit code of hrsync.
func checkCronJob(t *testing.T, cj *batchv1.CronJob, pc podChecks) {
	t.Helper()
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	if _, err := config.ParseSchedule(cj.Spec.Schedule); err != nil {
		t.Errorf("schedule %q: %v", cj.Spec.Schedule, err)
	}
	js := cj.Spec.JobTemplate.Spec
	if js.BackoffLimit == nil || *js.BackoffLimit < 1 || *js.BackoffLimit > 3 {
		t.Errorf("backoffLimit %v, want 1 to 3: a few retries of a failed run", js.BackoffLimit)
	}
	if js.ActiveDeadlineSeconds == nil || *js.ActiveDeadlineSeconds <= 0 {
		t.Error("no activeDeadlineSeconds: a hung run would hold the schedule forever")
	}
	pod := js.Template.Spec
	// The API refuses a podFailurePolicy unless the pods never restart.
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never (podFailurePolicy requires it)", pod.RestartPolicy)
	}
	c := checkPod(t, pod, pc)
	if len(c.Args) < 2 || c.Args[0] != "run" {
		t.Errorf("args %v, want run ...", c.Args)
	}
	checkFailurePolicy(t, js.PodFailurePolicy, c.Name)
}

// checkSQLiteSingle wants one daemon, replaced by Recreate, its state on a
// ReadWriteOnce volume, and no CronJob beside it.
func checkSQLiteSingle(t *testing.T, objs objects) {
	t.Helper()
	if len(objs.deployments) != 1 || len(objs.cronJobs) != 0 {
		t.Fatalf("%d Deployments and %d CronJobs, want the daemon alone", len(objs.deployments), len(objs.cronJobs))
	}
	d := objs.deployments[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas %v, want 1: SQLite has one writer", d.Spec.Replicas)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("strategy %q, want Recreate: two pods would open the SQLite file at once", d.Spec.Strategy.Type)
	}
	claims := map[string]*corev1.PersistentVolumeClaim{}
	for _, c := range objs.claims {
		claims[c.Name] = c
	}
	state := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		c, ok := claims[v.PersistentVolumeClaim.ClaimName]
		if !ok {
			t.Errorf("volume %s claims %s, which the build does not hold", v.Name, v.PersistentVolumeClaim.ClaimName)
			continue
		}
		if v.Name == "state" {
			state = slices.Equal(c.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce})
		}
	}
	if !state {
		t.Error("the SQLite state is not on a volume claimed ReadWriteOnce alone")
	}
}

// checkPostgresFleet wants several daemon replicas and, as the
// alternative, suspended CronJobs that split the tenants with --shard i/n.
func checkPostgresFleet(t *testing.T, objs objects) {
	t.Helper()
	if len(objs.deployments) != 1 {
		t.Fatalf("%d Deployments, want the daemon", len(objs.deployments))
	}
	if r := objs.deployments[0].Spec.Replicas; r == nil || *r < 2 {
		t.Errorf("daemon replicas %v, want several", r)
	}
	checkAntiAffinity(t, objs.deployments[0].Spec.Template.Spec, objs.deployments[0].Spec.Template.Labels)
	env := objs.deployments[0].Spec.Template.Spec.Containers[0].Env
	if i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == "HRSYNC_REPLICA_ID" }); i < 0 ||
		env[i].ValueFrom == nil || env[i].ValueFrom.FieldRef == nil || env[i].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Error("the replicas are not named by their pod (HRSYNC_REPLICA_ID from metadata.name)")
	}
	if len(objs.budgets) != 1 {
		t.Errorf("%d PodDisruptionBudgets, want one for the daemon", len(objs.budgets))
	}
	n := len(objs.cronJobs)
	if n < 2 {
		t.Fatalf("%d CronJobs, want one per shard", n)
	}
	var shards []int
	for _, cj := range objs.cronJobs {
		if cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
			t.Errorf("CronJob %s is not suspended: it would run the daemon's tenants a second time", cj.Name)
		}
		args := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
		i := slices.Index(args, "--shard")
		if i < 0 || i+1 >= len(args) {
			t.Errorf("CronJob %s: args %v have no --shard i/n", cj.Name, args)
			continue
		}
		idx, total, ok := strings.Cut(args[i+1], "/")
		k, err1 := strconv.Atoi(idx)
		m, err2 := strconv.Atoi(total)
		if !ok || err1 != nil || err2 != nil || m != n {
			t.Errorf("CronJob %s: --shard %q, want i/%d", cj.Name, args[i+1], n)
			continue
		}
		shards = append(shards, k)
	}
	slices.Sort(shards)
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(shards, want) {
		t.Errorf("shards %v, want each of %v once", shards, want)
	}
}

// TestMakeManifests renders the overlays as a release does, and finds the
// release's version as the tag of every image.
func TestMakeManifests(t *testing.T) {
	kubectl(t)
	out := t.TempDir()
	const version = "v9.8.7-test"
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "manifests", "VERSION="+version, "MANIFESTS="+out)
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make manifests: %v\n%s", err, b)
	}
	for _, name := range overlays {
		b, err := os.ReadFile(filepath.Join(out, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		objs := decodeAll(t, name+".yaml", b)
		var pods []corev1.PodSpec
		for _, d := range objs.deployments {
			pods = append(pods, d.Spec.Template.Spec)
		}
		for _, cj := range objs.cronJobs {
			pods = append(pods, cj.Spec.JobTemplate.Spec.Template.Spec)
		}
		if len(pods) == 0 {
			t.Fatalf("%s: no workload rendered", name)
		}
		for _, p := range pods {
			for _, c := range p.Containers {
				if c.Image != imageName+":"+version {
					t.Errorf("%s: image %q, want %s:%s", name, c.Image, imageName, version)
				}
			}
		}
	}
}

// TestDockerfile checks by reading what the image promises, since its base
// images come from registries no test reaches: a Go build stage with CGO
// off and the version stamped, and a distroless runtime stage run as a
// numeric non-root user. deploy/image builds the same content without a
// registry and runs it.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for name, re := range map[string]string{
		"build stage":       `(?m)^FROM golang:\S+ AS build$`,
		"static build":      `CGO_ENABLED=0 .*go build`,
		"version stamped":   `-X main\.version=\$\{VERSION\}`,
		"version build arg": `(?m)^ARG VERSION`,
		"distroless":        `(?m)^FROM gcr\.io/distroless/static\S*:nonroot AS runtime$`,
		"numeric user":      `(?m)^USER 65532:65532$`,
		"binary copied":     `(?m)^COPY --from=build /out/hrsync `,
	} {
		t.Run(name, func(t *testing.T) {
			if !regexp.MustCompile(re).MatchString(df) {
				t.Errorf("Dockerfile does not match %s", re)
			}
		})
	}
}
