package config

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"hrsync/sources/registry"
)

// docsFile is the configuration reference.
const docsFile = "../docs/configuration.md"

// leafTypes are struct types read from one YAML scalar.
var leafTypes = []reflect.Type{reflect.TypeFor[Duration](), reflect.TypeFor[ConnURL]()}

// keyPaths walks t's yaml tags and returns every key path ("store.url",
// "tenants[].source.csv.dir"), each with whether it is a leaf (a value) or
// a section holding other keys.
func keyPaths(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if strings.Contains(","+opts+",", ",inline,") {
			keyPaths(ft, prefix, out)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		path := prefix + name
		switch {
		case ft == reflect.TypeFor[Source]():
			out[path] = false
			sourcePaths(path+".", out)
		case ft.Kind() == reflect.Struct && !slices.Contains(leafTypes, ft):
			out[path] = false
			keyPaths(ft, path+".", out)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out[path] = false
			out[path+"[]"] = false
			keyPaths(ft.Elem(), path+"[].", out)
		default:
			out[path] = true
		}
	}
}

// sourcePaths adds the key paths of every registered kind of source, under
// its section (testKinds).
func sourcePaths(prefix string, out map[string]bool) {
	for _, sec := range testKinds.SourceSections() {
		out[prefix+sec] = false
		types := registry.Types(sec)
		for _, typ := range types {
			node := &yaml.Node{Kind: yaml.MappingNode}
			if typ != "" {
				node.Content = []*yaml.Node{{Kind: yaml.ScalarNode, Value: "type"}, {Kind: yaml.ScalarNode, Value: typ}}
			}
			opts, _, _ := testKinds.SourceOptions(sec, node)
			keyPaths(reflect.TypeOf(opts), prefix+sec+".", out)
		}
	}
}

// documentedKey finds the key in the first cell of a reference table row.
var documentedKey = regexp.MustCompile("^\\| `([A-Za-z0-9_.\\[\\]]+)` \\|")

func TestDocsListEveryKey(t *testing.T) {
	data, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatalf("read the reference: %v", err)
	}
	paths := map[string]bool{}
	keyPaths(reflect.TypeFor[Config](), "", paths)
	documented := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if m := documentedKey.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "HRSYNC_") {
			documented[m[1]] = true
		}
	}
	t.Run("every key is documented", func(t *testing.T) {
		for path, leaf := range paths {
			if leaf && !documented[path] {
				t.Errorf("%s is not in %s", path, docsFile)
			}
		}
	})
	t.Run("every documented key exists", func(t *testing.T) {
		for path := range documented {
			if _, ok := paths[path]; !ok {
				t.Errorf("%s documents %s, which Config does not have", docsFile, path)
			}
		}
	})
	t.Run("every environment variable is documented", func(t *testing.T) {
		for _, name := range []string{EnvConfig, EnvStoreURL, EnvAPIBaseURL, EnvAPIToken, EnvAPITokenFile, EnvLogLevel, EnvLogFormat, EnvHTTPListen, EnvTimezone, EnvPushgateway} {
			if !strings.Contains(string(data), "| `"+name+"` |") {
				t.Errorf("%s is not in the table of environment variables", name)
			}
		}
	})
	t.Run("the walk sees the whole schema", func(t *testing.T) {
		for _, p := range []string{"store.url", "api.trustIdempotencyKey", "tenants[].source.csv.stableFor", "tenants[].source.sql.dsnEnv", "tenants[].source.csv.columns", "tenants[].schedules.orders"} {
			if !paths[p] {
				t.Errorf("walk misses %s", p)
			}
		}
		if _, ok := paths["api.token"]; ok {
			t.Errorf("api.token is not a key of the file")
		}
	})
}
