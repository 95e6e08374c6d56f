package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"hrsync/internal/emutest"
)

// repoRoot is the repository's root, from this package's folder.
var repoRoot = filepath.Join("..", "..")

// stage is the runtime metadata of one stage of a Dockerfile.
type stage struct {
	user, workdir, entrypoint, cmd string
	expose                         []string
	labels                         []string
}

// runtimeStage parses the last stage of a Dockerfile (continuation lines
// joined): its USER, WORKDIR, EXPOSE, ENTRYPOINT, CMD and LABEL keys.
func runtimeStage(t *testing.T, path string) stage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var s stage
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(word) {
		case "FROM":
			s = stage{}
		case "USER":
			s.user = rest
		case "WORKDIR":
			s.workdir = rest
		case "EXPOSE":
			s.expose = append(s.expose, strings.Fields(rest)...)
		case "ENTRYPOINT":
			s.entrypoint = rest
		case "CMD":
			s.cmd = rest
		case "LABEL":
			for _, m := range regexp.MustCompile(`([\w.-]+)=`).FindAllStringSubmatch(rest, -1) {
				s.labels = append(s.labels, m[1])
			}
		}
	}
	slices.Sort(s.labels)
	return s
}

// TestContainerfileMatchesDockerfile wants the image CI builds to carry
// the runtime metadata of the Dockerfile users build.
func TestContainerfileMatchesDockerfile(t *testing.T) {
	ref := runtimeStage(t, filepath.Join(repoRoot, "Dockerfile"))
	ci := runtimeStage(t, "Containerfile")
	if ref.user != "65532:65532" {
		t.Errorf("the Dockerfile's USER is %q, want 65532:65532", ref.user)
	}
	for _, c := range []struct{ what, ref, ci string }{
		{"USER", ref.user, ci.user},
		{"WORKDIR", ref.workdir, ci.workdir},
		{"ENTRYPOINT", ref.entrypoint, ci.entrypoint},
		{"CMD", ref.cmd, ci.cmd},
		{"EXPOSE", strings.Join(ref.expose, " "), strings.Join(ci.expose, " ")},
		{"LABEL keys", strings.Join(ref.labels, " "), strings.Join(ci.labels, " ")},
	} {
		if c.ref == "" || c.ref != c.ci {
			t.Errorf("%s: Dockerfile %q, Containerfile %q", c.what, c.ref, c.ci)
		}
	}
}

// containerTools returns podman's and buildah's paths, failing the test
// when one is missing: `make test-deps` installs them.
func containerTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"podman", "buildah", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: the image test builds and runs the image with it (make test-deps installs it): %v", tool, err)
		}
	}
}

// engine runs podman on the test's own storage with the options this
// kind of machine needs: vfs storage (no overlay mounts), runc with
// cgroupfs (crun refuses a hybrid cgroup hierarchy); runPeople adds the
// host's network and limits the container may set.
type engine struct {
	t       *testing.T
	storage string
}

func (e engine) args(args ...string) []string {
	return append([]string{
		"--storage-driver", "vfs", "--root", filepath.Join(e.storage, "storage"), "--runroot", filepath.Join(e.storage, "run"),
		"--runtime", "runc", "--cgroup-manager", "cgroupfs",
	}, args...)
}

// podman runs podman with args and returns its stdout; it fails the test
// unless podman exits 0.
func (e engine) podman(ctx context.Context, args ...string) []byte {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "podman", e.args(args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// imageConfig is the part of `podman image inspect` the test reads.
type imageConfig struct {
	Config struct {
		User         string
		Entrypoint   []string
		Cmd          []string
		WorkingDir   string
		ExposedPorts map[string]struct{}
		Env          []string
		Labels       map[string]string
	}
}

// TestImage builds the image as CI does (`make image`, with no registry),
// checks its metadata and content, then runs `run people` in it, with a
// read-only root file system, as the image's user 65532, its
// configuration and token mounted read-only as the Kubernetes manifests
// mount them, against the platform's emulator: the run exits 0 and the
// people are on the platform.
func TestImage(t *testing.T) {
	containerTools(t)
	if os.Getuid() != 0 {
		t.Fatal("the image test builds and runs the image as root (podman and buildah with vfs storage)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	storage := t.TempDir()
	// conmon runs podman's cleanup of an exited container in the
	// background: wait for it to let go of the storage before the
	// temporary folder is removed.
	t.Cleanup(func() {
		var err error
		for range 50 {
			if err = os.RemoveAll(storage); err == nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Errorf("remove the image storage: %v", err)
	})
	e := engine{t: t, storage: storage}
	const image = "localhost/hrsync:image-test"
	const version = "v0.0.0-image-test"

	start := time.Now()
	build := exec.CommandContext(ctx, "make", "-s", "image", "IMAGE="+image, "VERSION="+version)
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "IMAGE_STORAGE="+storage)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image: %s", time.Since(start).Round(time.Second))

	var inspect []imageConfig
	if err := json.Unmarshal(e.podman(ctx, "image", "inspect", image), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman image inspect: %v (%d images)", err, len(inspect))
	}
	checkConfig(t, inspect[0])
	checkContent(ctx, t, e, image)
	runPeople(ctx, t, e, image)
}

// checkConfig wants the metadata the Dockerfile gives the image.
func checkConfig(t *testing.T, ic imageConfig) {
	t.Helper()
	c := ic.Config
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/hrsync"}) {
		t.Errorf("entrypoint %v", c.Entrypoint)
	}
	if !slices.Equal(c.Cmd, []string{"daemon", "--config", "/etc/hrsync/hrsync.yaml"}) {
		t.Errorf("cmd %v", c.Cmd)
	}
	if c.WorkingDir != "/var/lib/hrsync" {
		t.Errorf("working folder %q", c.WorkingDir)
	}
	if _, ok := c.ExposedPorts["9090/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v, want 9090/tcp", c.ExposedPorts)
	}
	if v := c.Labels["org.opencontainers.image.version"]; v != "v0.0.0-image-test" {
		t.Errorf("version label %q", v)
	}
}

// checkContent exports the image's file system and wants a static hrsync
// binary, a CA bundle that parses, the time zones, user 65532 in
// /etc/passwd, and nothing to run besides hrsync (no shell).
func checkContent(ctx context.Context, t *testing.T, e engine, image string) {
	t.Helper()
	id := strings.TrimSpace(string(e.podman(ctx, "create", image)))
	defer e.podman(context.Background(), "rm", id)
	files := map[string][]byte{}
	var names []string
	tr := tar.NewReader(bytes.NewReader(e.podman(ctx, "export", id)))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := "/" + strings.TrimPrefix(h.Name, "./")
		names = append(names, name)
		if h.Typeflag == tar.TypeReg && !strings.HasPrefix(name, "/usr/share/zoneinfo/") {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = b
			if h.Mode&0o111 != 0 && name != "/usr/local/bin/hrsync" {
				t.Errorf("%s is executable: the image should hold no program but hrsync", name)
			}
		}
	}
	bin, ok := files["/usr/local/bin/hrsync"]
	if !ok {
		t.Fatalf("no /usr/local/bin/hrsync in the image; it holds %v", names)
	}
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("/usr/local/bin/hrsync: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Error("/usr/local/bin/hrsync is dynamically linked: the image has no libc")
		}
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(files["/etc/ssl/certs/ca-certificates.crt"]) {
		t.Error("no CA certificates in /etc/ssl/certs/ca-certificates.crt: HTTPS to the platform would fail")
	}
	if !slices.Contains(names, "/usr/share/zoneinfo/Europe/Paris") {
		t.Error("no time zones in /usr/share/zoneinfo: a configured timezone would not load")
	}
	if !strings.Contains(string(files["/etc/passwd"]), ":65532:65532:") {
		t.Errorf("/etc/passwd does not name 65532:\n%s", files["/etc/passwd"])
	}
}

// testConfig is the configuration the container loads from its read-only
// /etc/hrsync, laid out as the sqlite-single overlay's: the state and the
// drop folder on volumes, the token a file of a mounted Secret, a time
// zone the image must hold. The emulator listens on the host's loopback,
// which the container shares.
const testConfig = `store:
  url: sqlite:/var/lib/hrsync/state/hrsync.db
api:
  baseUrl: BASE_URL
  tokenFile: /var/run/secrets/hrsync/api-token
log:
  level: info
  format: json
timezone: Europe/Paris
tenants:
  - name: acme
    companyId: 10000000-0000-4000-8000-000000000001
    collectionId: 20000000-0000-4000-8000-000000000002
    source:
      csv:
        dir: /var/lib/hrsync/drop
        stableFor: 0s
        columns:
          externalId: Employee ID
          email: Work Email
          firstName: First Name
          lastName: Last Name
          department: Department
          location: Office
          startDate: Start Date
          birthDate: Birth Date
          addBalance: Add Balance
        dateLayouts:
          startDate: 01/02/2006
          birthDate: 01/02/2006
    people:
      defaultBalance: 25
`

// runPeople runs `run people` in the image against the emulator.
func runPeople(ctx context.Context, t *testing.T, e engine, image string) {
	t.Helper()
	emu, baseURL := emutest.Serve(t)

	dir := t.TempDir()
	cfgDir, secrets, state, drop := filepath.Join(dir, "config"), filepath.Join(dir, "secrets"), filepath.Join(dir, "state"), filepath.Join(dir, "drop")
	for _, d := range []string{cfgDir, secrets, state, drop} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := strings.Replace(testConfig, "BASE_URL", baseURL, 1)
	if err := os.WriteFile(filepath.Join(cfgDir, "hrsync.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "api-token"), []byte(emutest.Token), 0o644); err != nil {
		t.Fatal(err)
	}
	export, err := os.ReadFile(filepath.Join(repoRoot, "examples", "exports", "employees.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drop, "employees.csv"), export, 0o644); err != nil {
		t.Fatal(err)
	}
	// The volumes belong to the pod's fsGroup, 65532, as the kubelet makes them.
	for _, d := range []string{state, drop} {
		if err := os.Chown(d, 65532, 65532); err != nil {
			t.Fatal(err)
		}
	}
	// Limits within this process's own: podman's defaults are above what
	// a process without CAP_SYS_RESOURCE may set, and runc refuses them.
	ulimit := func(resource int, name string, most uint64) string {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(resource, &lim); err != nil {
			t.Fatal(err)
		}
		n := strconv.FormatUint(min(lim.Cur, most), 10)
		return name + "=" + n + ":" + n
	}

	start := time.Now()
	args := e.args("run", "--rm", "--network", "host",
		"--read-only", "--read-only-tmpfs=false", "--tmpfs", "/tmp",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--ulimit", ulimit(syscall.RLIMIT_NOFILE, "nofile", 4096), "--ulimit", ulimit(6 /* RLIMIT_NPROC */, "nproc", 1024),
		"-v", cfgDir+":/etc/hrsync:ro", "-v", secrets+":/var/run/secrets/hrsync:ro",
		"-v", state+":/var/lib/hrsync/state", "-v", drop+":/var/lib/hrsync/drop",
		image, "run", "people", "--config", "/etc/hrsync/hrsync.yaml")
	cmd := exec.CommandContext(ctx, "podman", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("podman run ... run people: %s", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("run people in the image: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}

	rows, err := csv.NewReader(bytes.NewReader(export)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, r := range rows[1:] {
		want[r[0]] = true
	}
	got := map[string]bool{}
	for _, c := range emu.State().Companies {
		if c.ID == "10000000-0000-4000-8000-000000000001" {
			for _, p := range c.People {
				if want[p.ExternalID] {
					got[p.ExternalID] = true
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d of the export's %d people are on the platform\nstdout:\n%s", len(got), len(want), stdout.String())
	}
	// The container ran as 65532: what it wrote on its volumes is 65532's.
	fi, err := os.Stat(filepath.Join(state, "hrsync.db"))
	if err != nil {
		t.Fatalf("no state on the state volume: %v", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 65532 || st.Gid != 65532 {
		t.Errorf("the state file belongs to %v, want 65532:65532 (the image's user)", fi.Sys())
	}
	if _, err := os.Stat(filepath.Join(drop, "processed", "employees.csv")); err != nil {
		t.Errorf("the export was not archived in processed/: %v", err)
	}
}
