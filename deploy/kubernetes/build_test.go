package kubernetes_test

// Building the overlays with the real kustomize (`kubectl kustomize`) and
// decoding what it prints strictly into the Kubernetes API types: a field
// the API does not know, a duplicate field or a kind this test does not
// expect fails the test.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// overlays are the installations shipped in overlays/.
var overlays = []string{"sqlite-single", "postgres-fleet"}

// objects is one build of an overlay, decoded, by kind.
type objects struct {
	serviceAccounts []*corev1.ServiceAccount
	configMaps      []*corev1.ConfigMap
	secrets         []*corev1.Secret
	services        []*corev1.Service
	claims          []*corev1.PersistentVolumeClaim
	deployments     []*appsv1.Deployment
	cronJobs        []*batchv1.CronJob
	networkPolicies []*networkingv1.NetworkPolicy
	budgets         []*policyv1.PodDisruptionBudget
}

// strictDecoder decodes YAML into the API types of the kinds hrsync ships,
// refusing unknown and duplicate fields.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
}

// kubectl returns the kubectl binary, failing the test when it is missing:
// CI installs it, and the manifests are only proven by the real kustomize.
func kubectl(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is needed to build the overlays with kustomize (`kubectl kustomize`): %v", err)
	}
	return path
}

// kustomize builds the kustomization in dir with `kubectl kustomize`.
func kustomize(t *testing.T, dir string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl(t), "kustomize", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	return out
}

// decodeAll splits a stream of YAML documents and decodes each strictly;
// name says where the stream came from in failures.
func decodeAll(t *testing.T, name string, stream []byte) objects {
	t.Helper()
	dec := strictDecoder(t)
	var objs objects
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", name, i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: document %d does not decode strictly: %v", name, i, err)
		}
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			objs.serviceAccounts = append(objs.serviceAccounts, o)
		case *corev1.ConfigMap:
			objs.configMaps = append(objs.configMaps, o)
		case *corev1.Secret:
			objs.secrets = append(objs.secrets, o)
		case *corev1.Service:
			objs.services = append(objs.services, o)
		case *corev1.PersistentVolumeClaim:
			objs.claims = append(objs.claims, o)
		case *appsv1.Deployment:
			objs.deployments = append(objs.deployments, o)
		case *batchv1.CronJob:
			objs.cronJobs = append(objs.cronJobs, o)
		case *networkingv1.NetworkPolicy:
			objs.networkPolicies = append(objs.networkPolicies, o)
		case *policyv1.PodDisruptionBudget:
			objs.budgets = append(objs.budgets, o)
		default:
			t.Fatalf("%s: document %d is a %v, which this test does not check", name, i, gvk)
		}
	}
	return objs
}

// buildOverlay builds overlays/name and decodes it.
func buildOverlay(t *testing.T, name string) objects {
	t.Helper()
	return decodeAll(t, name, kustomize(t, filepath.Join("overlays", name)))
}

// imageTag reads the tag an overlay's kustomization gives the image.
func imageTag(t *testing.T, overlay string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("overlays", overlay, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct {
			Name   string `json:"name"`
			NewTag string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatalf("overlays/%s/kustomization.yaml: %v", overlay, err)
	}
	for _, img := range k.Images {
		if img.Name == imageName {
			return img.NewTag
		}
	}
	t.Fatalf("overlays/%s/kustomization.yaml sets no tag for %s (images: newTag)", overlay, imageName)
	return ""
}
