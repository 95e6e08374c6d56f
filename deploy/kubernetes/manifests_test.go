package kubernetes_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"hrsync/config"
)

// The parts of the Kubernetes objects the tests read.
type (
	envVar struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	probe struct {
		HTTPGet *struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"`
		} `yaml:"httpGet"`
	}
	container struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Env   []envVar `yaml:"env"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		Resources struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
		LivenessProbe   *probe `yaml:"livenessProbe"`
		ReadinessProbe  *probe `yaml:"readinessProbe"`
		SecurityContext struct {
			ReadOnlyRootFilesystem bool `yaml:"readOnlyRootFilesystem"`
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	podSpec struct {
		RestartPolicy                 string `yaml:"restartPolicy"`
		TerminationGracePeriodSeconds int    `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot bool `yaml:"runAsNonRoot"`
			RunAsUser    int  `yaml:"runAsUser"`
		} `yaml:"securityContext"`
		Containers []container `yaml:"containers"`
		Volumes    []struct {
			Name      string `yaml:"name"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
			} `yaml:"persistentVolumeClaim"`
		} `yaml:"volumes"`
	}
	cronJob struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Schedule          string `yaml:"schedule"`
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					BackoffLimit          *int `yaml:"backoffLimit"`
					ActiveDeadlineSeconds int  `yaml:"activeDeadlineSeconds"`
					Template              struct {
						Spec podSpec `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		} `yaml:"spec"`
	}
	deployment struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Replicas int `yaml:"replicas"`
			Template struct {
				Spec podSpec `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	configMap struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
		Data map[string]string `yaml:"data"`
	}
)

// decode reads one manifest into out, refusing unknown shapes of the
// fields out names.
func decode(t *testing.T, name string, out any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
}

// checkPod checks what both workloads share: one container running the
// image as non-root, the token and the store URL from the Secret, the
// configuration from the ConfigMap at the path --config names, resources,
// and the data volume.
func checkPod(t *testing.T, p podSpec, cm configMap) container {
	t.Helper()
	if !p.SecurityContext.RunAsNonRoot || p.SecurityContext.RunAsUser == 0 {
		t.Errorf("pod security context %+v: want runAsNonRoot and a non-zero user", p.SecurityContext)
	}
	if len(p.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(p.Containers))
	}
	c := p.Containers[0]
	if !c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the container's root filesystem is writable")
	}
	secretEnv := map[string]string{}
	for _, e := range c.Env {
		if e.Value != "" && strings.Contains(strings.ToLower(e.Name), "token") {
			t.Errorf("env %s holds a literal value; the token must come from a Secret", e.Name)
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			secretEnv[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if secretEnv[config.EnvAPIToken] == "" {
		t.Errorf("%s is not read from a Secret (env %+v)", config.EnvAPIToken, c.Env)
	}
	for _, k := range []string{"cpu", "memory"} {
		if c.Resources.Requests[k] == "" || c.Resources.Limits[k] == "" {
			t.Errorf("resources %+v: want requests and limits of %s", c.Resources, k)
		}
	}
	cfgPath := ""
	for i, a := range c.Args {
		if a == "--config" && i+1 < len(c.Args) {
			cfgPath = c.Args[i+1]
		}
	}
	if cfgPath == "" {
		t.Fatalf("args %v name no --config", c.Args)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	var cfgVolume, dataVolume bool
	for _, v := range p.Volumes {
		switch {
		case v.ConfigMap != nil:
			if v.ConfigMap.Name != cm.Metadata.Name {
				t.Errorf("volume %s mounts ConfigMap %s, want %s", v.Name, v.ConfigMap.Name, cm.Metadata.Name)
			}
			if _, ok := cm.Data[filepath.Base(cfgPath)]; !ok || mounts[v.Name] != filepath.Dir(cfgPath) {
				t.Errorf("--config %s is not the ConfigMap's key mounted at %s", cfgPath, mounts[v.Name])
			}
			cfgVolume = true
		case v.PersistentVolumeClaim != nil:
			dataVolume = mounts[v.Name] != ""
		}
	}
	if !cfgVolume {
		t.Error("no volume mounts the configuration from a ConfigMap")
	}
	if !dataVolume && secretEnv[config.EnvStoreURL] == "" {
		t.Error("the store is neither on a mounted volume nor a PostgreSQL URL from a Secret")
	}
	return c
}

func TestManifests(t *testing.T) {
	var cm configMap
	decode(t, "configmap.yaml", &cm)

	t.Run("configmap loads", func(t *testing.T) {
		body, ok := cm.Data["hrsync.yaml"]
		if cm.Kind != "ConfigMap" || !ok {
			t.Fatalf("configmap.yaml: kind %q, keys %v", cm.Kind, cm.Data)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "hrsync.yaml")
		// The drop folder of the manifest does not exist here; point it
		// at a folder that does, through the file itself.
		body = strings.ReplaceAll(body, "/var/lib/hrsync/drop", dir)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{config.EnvAPIToken: "test-token", config.EnvStoreURL: "sqlite:" + filepath.Join(dir, "state.db")}
		cfg, err := config.Load(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatalf("the ConfigMap's configuration does not load: %v", err)
		}
		if cfg.HTTP.Listen != ":9090" {
			t.Errorf("http.listen = %q, want :9090 (the probes' port)", cfg.HTTP.Listen)
		}
	})

	t.Run("cronjob", func(t *testing.T) {
		var cj cronJob
		decode(t, "cronjob.yaml", &cj)
		if cj.Kind != "CronJob" {
			t.Fatalf("kind %q", cj.Kind)
		}
		s := cj.Spec
		if s.ConcurrencyPolicy != "Forbid" {
			t.Errorf("concurrencyPolicy %q, want Forbid", s.ConcurrencyPolicy)
		}
		if _, err := config.ParseSchedule(s.Schedule); err != nil {
			t.Errorf("schedule %q: %v", s.Schedule, err)
		}
		js := s.JobTemplate.Spec
		if js.BackoffLimit == nil || *js.BackoffLimit > 3 {
			t.Errorf("backoffLimit %v, want set and small", js.BackoffLimit)
		}
		if js.ActiveDeadlineSeconds <= 0 {
			t.Errorf("activeDeadlineSeconds %d, want a bound", js.ActiveDeadlineSeconds)
		}
		pod := js.Template.Spec
		if pod.RestartPolicy != "Never" && pod.RestartPolicy != "OnFailure" {
			t.Errorf("restartPolicy %q", pod.RestartPolicy)
		}
		c := checkPod(t, pod, cm)
		if len(c.Args) < 2 || c.Args[0] != "run" {
			t.Errorf("args %v, want run ...", c.Args)
		}
	})

	t.Run("deployment", func(t *testing.T) {
		var d deployment
		decode(t, "deployment.yaml", &d)
		if d.Kind != "Deployment" {
			t.Fatalf("kind %q", d.Kind)
		}
		pod := d.Spec.Template.Spec
		c := checkPod(t, pod, cm)
		if len(c.Args) == 0 || c.Args[0] != "daemon" {
			t.Errorf("args %v, want daemon ...", c.Args)
		}
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
			t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
		}
		if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9090 {
			t.Errorf("ports %+v, want 9090 (http.listen of the ConfigMap)", c.Ports)
		}
		grace := time.Duration(0)
		if i := slices.Index(c.Args, "--grace"); i >= 0 && i+1 < len(c.Args) {
			var err error
			if grace, err = time.ParseDuration(c.Args[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if grace == 0 || time.Duration(pod.TerminationGracePeriodSeconds)*time.Second <= grace {
			t.Errorf("terminationGracePeriodSeconds %d must exceed the daemon's --grace %v", pod.TerminationGracePeriodSeconds, grace)
		}
	})
}

// TestDockerfile checks by reading what the image promises, since no
// Docker engine runs the build here: a Go build stage with CGO off and the
// version stamped, and a distroless non-root runtime stage.
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
		"non-root user":     `(?m)^USER nonroot`,
		"binary copied":     `(?m)^COPY --from=build /out/hrsync `,
	} {
		t.Run(name, func(t *testing.T) {
			if !regexp.MustCompile(re).MatchString(df) {
				t.Errorf("Dockerfile does not match %s", re)
			}
		})
	}
}
