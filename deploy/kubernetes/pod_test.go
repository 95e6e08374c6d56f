package kubernetes_test

// Checks of the pods the Deployment and the CronJobs run: security,
// resources, the image, and the configuration they read, loaded by hrsync's
// own loader from a copy of the pod's file system.

import (
	"hrsync/store"
	_ "hrsync/store/postgres" // registers the postgres dialect, as in cmd/hrsync
	_ "hrsync/store/sqlite"   // registers the sqlite dialect, as in cmd/hrsync
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"hrsync/config"

	_ "hrsync/sources/dropfolder" // the kinds of source the image offers
	"hrsync/sources/registry"
	_ "hrsync/sources/s3drop"
	_ "hrsync/sources/sftpdrop"
	_ "hrsync/sources/sqlsrc"
)

// imageName is the image every workload runs.
const imageName = "ghcr.io/example/hrsync"

// serviceAccountName is the account every workload runs under.
const serviceAccountName = "hrsync"

// podChecks are the facts a pod template is checked against.
type podChecks struct {
	objs objects
	// tag is the image tag the overlay sets.
	tag string
	// uid is the numeric user of the Dockerfile.
	uid int64
}

// checkPod checks what every pod of hrsync shares and returns its one
// container.
func checkPod(t *testing.T, spec corev1.PodSpec, pc podChecks) corev1.Container {
	t.Helper()
	if spec.ServiceAccountName != serviceAccountName {
		t.Errorf("serviceAccountName %q, want %s", spec.ServiceAccountName, serviceAccountName)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token; hrsync never calls the Kubernetes API")
	}
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != pc.uid ||
		psc.RunAsGroup == nil || *psc.RunAsGroup != pc.uid || psc.FSGroup == nil || *psc.FSGroup != pc.uid {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and user, group and fsGroup %d (the Dockerfile's USER)", psc, pc.uid)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("the pod has no RuntimeDefault seccomp profile")
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	checkContainerSecurity(t, c)
	checkResources(t, c.Resources)
	repo, tag, _ := strings.Cut(c.Image, ":")
	if repo != imageName || tag == "" || tag == "latest" || tag != pc.tag {
		t.Errorf("image %q, want %s tagged %q (the overlay's images: newTag), never latest", c.Image, imageName, pc.tag)
	}
	if c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("imagePullPolicy %q, want Always (base/deployment.yaml says why)", c.ImagePullPolicy)
	}
	for _, e := range c.Env {
		if e.Name == config.EnvAPIToken || e.Name == config.EnvStoreURL || strings.Contains(strings.ToUpper(e.Name), "TOKEN") {
			t.Errorf("env %s: secrets come as mounted files (api.tokenFile, store.urlFile), not variables", e.Name)
		}
	}
	checkConfigLoads(t, spec, c, pc.objs)
	return c
}

// checkContainerSecurity checks the container's securityContext.
func checkContainerSecurity(t *testing.T, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil {
		t.Fatal("the container has no securityContext")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the container's root file system is writable")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("the container allows privilege escalation")
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities %+v, want every one dropped and none added", sc.Capabilities)
	}
}

// checkResources wants requests and limits of cpu, memory and
// ephemeral-storage, each request at most its limit.
func checkResources(t *testing.T, r corev1.ResourceRequirements) {
	t.Helper()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		req, okReq := r.Requests[name]
		lim, okLim := r.Limits[name]
		if !okReq || !okLim {
			t.Errorf("resources: want a request and a limit of %s (requests %v, limits %v)", name, r.Requests, r.Limits)
			continue
		}
		if req.Cmp(lim) > 0 {
			t.Errorf("resources: the %s request %s is over its limit %s", name, req.String(), lim.String())
		}
	}
	if mem, ok := r.Limits[corev1.ResourceMemory]; ok && mem.Cmp(resource.MustParse("256Mi")) < 0 {
		t.Errorf("memory limit %s: a first import of 1,000,000 people needs about 220 MiB (docs/benchmarks.md)", mem.String())
	}
}

// podRoot is a copy of a pod's file system in a temporary folder: each
// volume mount of the container is a folder, a ConfigMap's and a Secret's
// keys are files in it.
type podRoot struct {
	dir    string
	mounts map[string]corev1.Volume // mount path -> its volume
}

// path returns where the pod's path p lies in the copy.
func (r podRoot) path(p string) string { return filepath.Join(r.dir, p) }

// mountOf returns the volume mounted at p or above it, and its mount path.
func (r podRoot) mountOf(p string) (corev1.Volume, string, bool) {
	best := ""
	for m := range r.mounts {
		if (p == m || strings.HasPrefix(p, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	v, ok := r.mounts[best]
	return v, best, ok
}

// newPodRoot lays the container's mounts out under a temporary folder. The
// Secret's keys are those of secret.example.yaml, with test values.
func newPodRoot(t *testing.T, spec corev1.PodSpec, c corev1.Container, objs objects, secretValues map[string]string) podRoot {
	t.Helper()
	r := podRoot{dir: t.TempDir(), mounts: map[string]corev1.Volume{}}
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		if i < 0 {
			t.Fatalf("volumeMount %s names no volume", m.Name)
		}
		v := spec.Volumes[i]
		r.mounts[m.MountPath] = v
		if err := os.MkdirAll(r.path(m.MountPath), 0o700); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		switch {
		case v.ConfigMap != nil:
			cm := findConfigMap(t, objs, v.ConfigMap.Name)
			for k, body := range cm.Data {
				files[k] = body
			}
		case v.Secret != nil:
			files = secretValues
		}
		for k, body := range files {
			if err := os.WriteFile(filepath.Join(r.path(m.MountPath), k), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r
}

// findConfigMap returns the built ConfigMap of that name.
func findConfigMap(t *testing.T, objs objects, name string) *corev1.ConfigMap {
	t.Helper()
	for _, cm := range objs.configMaps {
		if cm.Name == name {
			return cm
		}
	}
	t.Fatalf("a volume mounts ConfigMap %q, which the build does not hold", name)
	return nil
}

// exampleSecret reads secret.example.yaml, the Secret the docs tell the
// operator to create, strictly.
func exampleSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	b, err := os.ReadFile("secret.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, "secret.example.yaml", b)
	if len(objs.secrets) != 1 {
		t.Fatalf("secret.example.yaml holds %d Secrets, want 1", len(objs.secrets))
	}
	return objs.secrets[0]
}

// secretTestValues are the files of the mounted Secret in the copy: each
// key of the example Secret, with a test value of the same kind.
func secretTestValues(t *testing.T) map[string]string {
	t.Helper()
	values := map[string]string{}
	for k := range exampleSecret(t).StringData {
		switch k {
		case "store-url":
			values[k] = "postgres://hrsync@db.test:5432/hrsync?sslmode=require"
		default:
			values[k] = "test-value-of-" + k
		}
	}
	return values
}

// checkConfigLoads loads the configuration the container's --config names
// with hrsync's loader, as the daemon does (drop folders writable), from a
// copy of the pod's file system, and checks that the token and the store
// URL come from the mounted Secret and that the drop folders and a SQLite
// state lie on persistent volumes.
func checkConfigLoads(t *testing.T, spec corev1.PodSpec, c corev1.Container, objs objects) {
	t.Helper()
	i := slices.Index(c.Args, "--config")
	if i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("args %v name no --config", c.Args)
	}
	secrets := secretTestValues(t)
	root := newPodRoot(t, spec, c, objs, secrets)
	cfgPath := c.Args[i+1]
	body, err := os.ReadFile(root.path(cfgPath))
	if err != nil {
		t.Fatalf("--config %s is not a file of a mounted ConfigMap: %v", cfgPath, err)
	}
	// The copy's paths: every absolute path of the pod in the file is one
	// under the copy's folder. The drop folders are made where the
	// operator makes them, and only on a mounted volume.
	var pairs []string
	for _, m := range slices.SortedFunc(maps.Keys(root.mounts), func(a, b string) int { return len(b) - len(a) }) {
		pairs = append(pairs, " "+m, " "+root.path(m), ":"+m, ":"+root.path(m))
	}
	text := strings.NewReplacer(pairs...).Replace(string(body))
	for _, dir := range dropFolders(t, body) {
		v, _, ok := root.mountOf(dir)
		if !ok || v.PersistentVolumeClaim == nil {
			t.Errorf("drop folder %s is not on a persistent volume", dir)
			continue
		}
		if err := os.MkdirAll(root.path(dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	local := root.path(cfgPath)
	if err := os.WriteFile(local, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	noEnv := func(string) (string, bool) { return "", false }
	cfg, err := config.LoadChecked(local, noEnv, registry.Kinds{}, store.Dialects{}, config.Checks{Folders: config.FoldersWritable})
	if err != nil {
		t.Fatalf("the pod's configuration does not load: %v", err)
	}
	checkSecretFile(t, root, "api.tokenFile", cfg.API.TokenFile, cfg.API.Token.Value(), secrets)
	switch {
	case cfg.Store.URLFile != "":
		checkSecretFile(t, root, "store.urlFile", cfg.Store.URLFile, cfg.Store.URL.Value(), secrets)
	case strings.HasPrefix(cfg.Store.URL.Value(), "sqlite:"):
		file := strings.TrimPrefix(strings.TrimPrefix(cfg.Store.URL.Value(), "sqlite:"), root.dir)
		v, _, ok := root.mountOf(file)
		if !ok || v.PersistentVolumeClaim == nil {
			t.Errorf("the SQLite state %s is not on a persistent volume", file)
		}
	default:
		t.Errorf("the store URL is written in the file; it belongs in store.urlFile")
	}
	if port := listenPort(cfg.HTTP.Listen); len(c.Ports) > 0 && port != c.Ports[0].ContainerPort {
		t.Errorf("http.listen %q does not serve the container's port %d (probes, scrapes)", cfg.HTTP.Listen, c.Ports[0].ContainerPort)
	}
}

// checkSecretFile wants the file key names to be a key of the mounted
// Secret, and the value loaded to be that key's.
func checkSecretFile(t *testing.T, root podRoot, key, file, loaded string, secrets map[string]string) {
	t.Helper()
	podPath := strings.TrimPrefix(file, root.dir)
	v, mount, ok := root.mountOf(podPath)
	if !ok || v.Secret == nil {
		t.Errorf("%s %s is not a file of a mounted Secret", key, podPath)
		return
	}
	name := strings.TrimPrefix(podPath, mount+"/")
	if want, ok := secrets[name]; !ok || loaded != want {
		t.Errorf("%s %s: the value loaded is not the Secret's key %q", key, podPath, name)
	}
}

// dropFolders reads the tenants' CSV drop folders from a configuration.
func dropFolders(t *testing.T, body []byte) []string {
	t.Helper()
	var f struct {
		Tenants []struct {
			Source struct {
				CSV *struct {
					Dir string `json:"dir"`
				} `json:"csv"`
			} `json:"source"`
		} `json:"tenants"`
	}
	if err := yaml.Unmarshal(body, &f); err != nil {
		t.Fatalf("configuration: %v", err)
	}
	var dirs []string
	for _, tn := range f.Tenants {
		if tn.Source.CSV != nil {
			dirs = append(dirs, tn.Source.CSV.Dir)
		}
	}
	return dirs
}

// listenPort is the port of a host:port; 0 when there is none.
func listenPort(listen string) int32 {
	_, p, err := net.SplitHostPort(listen)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}
