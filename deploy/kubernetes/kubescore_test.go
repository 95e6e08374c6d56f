package kubernetes_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestKubeScore scores every overlay with kube-score, pinned in
// tools/go.mod, through `make kube-score` (what CI runs): no warning and
// no critical finding, the exceptions annotated in the manifests aside.
func TestKubeScore(t *testing.T) {
	kubectl(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "kube-score")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make kube-score: %v\n%s", err, out)
	}
	for _, o := range overlays {
		if !strings.Contains(string(out), "kube-score "+o+": ok") {
			t.Errorf("make kube-score did not score %s:\n%s", o, out)
		}
	}
}

// TestKubeScoreExceptionsExplained wants every kube-score/ignore
// annotation in the manifests preceded by comments that give each check
// it turns off a reason ("# - check-name: why").
func TestKubeScoreExceptionsExplained(t *testing.T) {
	ignore := regexp.MustCompile(`^\s*kube-score/ignore:\s*(\S+)\s*$`)
	found := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var comments []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if c, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
				comments = append(comments, strings.TrimSpace(c))
				continue
			}
			if m := ignore.FindStringSubmatch(line); m != nil {
				found++
				for _, check := range strings.Split(m[1], ",") {
					explained := false
					for _, c := range comments {
						if rest, ok := strings.CutPrefix(c, "- "+check+":"); ok && strings.TrimSpace(rest) != "" {
							explained = true
						}
					}
					if !explained {
						t.Errorf("%s: kube-score/ignore turns off %s with no comment above it saying why (# - %s: ...)", path, check, check)
					}
				}
			}
			comments = nil
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Error("no kube-score/ignore annotation found: the SQLite overlay's single Recreate replica needs one")
	}
}
