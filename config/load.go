package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Environment variables Load reads. A variable applies when it is set to a
// non-empty value; it then wins over the file.
const (
	EnvConfig       = "HRSYNC_CONFIG"              // the file, when no path is given
	EnvStoreURL     = "HRSYNC_STORE_URL"           // store.url, over urlEnv and urlFile
	EnvAPIBaseURL   = "HRSYNC_API_BASE_URL"        // api.baseUrl
	EnvAPIToken     = "HRSYNC_API_TOKEN"           //nolint:gosec // a variable's name, not a credential
	EnvAPITokenFile = "HRSYNC_API_TOKEN_FILE"      //nolint:gosec // a variable's name, not a credential
	EnvLogLevel     = "HRSYNC_LOG_LEVEL"           // log.level
	EnvLogFormat    = "HRSYNC_LOG_FORMAT"          // log.format
	EnvHTTPListen   = "HRSYNC_HTTP_LISTEN"         // http.listen
	EnvTimezone     = "HRSYNC_TIMEZONE"            // timezone
	EnvPushgateway  = "HRSYNC_METRICS_PUSHGATEWAY" // metrics.pushgateway
)

// Load reads the configuration file at path (or, when path is "", the file
// named by HRSYNC_CONFIG), fills defaults, applies environment overrides,
// resolves secrets and validates the result. env looks variables up; nil
// means os.LookupEnv. Relative paths written in the file (a store url's
// file, the default one included, as its dialect in dialects reads it, tokenFile, urlFile, dsnFile, a drop
// folder's dir) are taken from the file's directory; relative paths from
// the environment or a secret file from the working directory. Every path
// is absolute once loaded.
//
// Each tenant's source section is read by the kind kinds names for it
// (the program's source registry, sources/registry.Kinds): this package
// knows no kind of source.
//
// Every problem found is returned at once in a *Error. Load checks nothing
// on disk but the files it reads: LoadChecked also checks the drop folders.
func Load(path string, env func(string) (string, bool), kinds SourceKinds, dialects StoreDialects) (*Config, error) {
	return LoadChecked(path, env, kinds, dialects, Checks{})
}

// LoadChecked is Load that also checks the drop folders as checks asks,
// listing their problems with the file's.
func LoadChecked(path string, env func(string) (string, bool), kinds SourceKinds, dialects StoreDialects, checks Checks) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	if path == "" {
		path = lookup(env, EnvConfig)
	}
	if path == "" {
		return nil, &Error{Problems: []Problem{{Reason: "no configuration file: pass --config or set " + EnvConfig}}}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Problems: []Problem{{Reason: readReason(err)}}}
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, &Error{File: path, Problems: []Problem{{Reason: fmt.Sprintf("cannot resolve its folder: %v", err)}}}
	}
	cfg, err := parse(data, dir, env, kinds, dialects, checks)
	var cerr *Error
	if errors.As(err, &cerr) {
		cerr.File = path
	}
	return cfg, err
}

// Parse is Load on the bytes of a file: dir is the directory relative paths
// in it are taken from. It returns a *Error listing every problem.
func Parse(data []byte, dir string, env func(string) (string, bool), kinds SourceKinds, dialects StoreDialects) (*Config, error) {
	return parse(data, dir, env, kinds, dialects, Checks{})
}

func parse(data []byte, dir string, env func(string) (string, bool), kinds SourceKinds, dialects StoreDialects, checks Checks) (*Config, error) {
	if env == nil {
		env = os.LookupEnv
	}
	dialects = dialectsOr(dialects)
	if p, bad := checkSyntax(data); bad {
		return nil, &Error{Problems: []Problem{p}}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{Problems: []Problem{{Reason: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}}
	}
	if len(root.Content) == 0 {
		return nil, &Error{Problems: []Problem{{Reason: "the file is empty"}}}
	}
	idx := indexNode(&root)

	ps := &problems{list: checkKeys(&root)}
	cfg := Default()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(cfg); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, &Error{Problems: []Problem{{Reason: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}}
		}
		for _, msg := range te.Errors {
			ps.list = append(ps.list, idx.typeProblem(msg))
		}
	}
	for i := range cfg.Tenants {
		for _, msg := range cfg.Tenants[i].decodeErrs {
			ps.list = append(ps.list, idx.typeProblem(msg))
		}
		cfg.Tenants[i].decodeErrs = nil
		cfg.Tenants[i].Source.decode(kinds, fmt.Sprintf("tenants[%d].source", i), idx, ps)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		ps.list = append(ps.list, Problem{Line: extra.Line, Reason: "the file holds more than one YAML document"})
	}

	cfg.fillDefaults()
	cfg.resolvePaths(dir, dialects)
	envPaths := cfg.applyEnv(env)
	cfg.resolveSecrets(env, ps)
	cfg.absStoreURL(dialects)
	cfg.Store.dialects = dialects
	cfg.validate(ps)
	cfg.checkFolders(checks, ps)

	if len(ps.list) > 0 {
		for i := range ps.list {
			p := &ps.list[i]
			if name, ok := envPaths[p.Path]; ok && p.Env == "" {
				p.Env = name
			}
			if p.Line == 0 && p.Env == "" {
				p.Line = idx.lineOf(p.Path)
			}
		}
		sort.SliceStable(ps.list, func(i, j int) bool { return lineKey(ps.list[i]) < lineKey(ps.list[j]) })
		if checks.SourcesAside {
			cfg.setSourcesAside(ps)
		}
	}
	if len(ps.list) > 0 {
		return nil, &Error{Problems: ps.list}
	}
	return cfg, nil
}

// lineKey orders problems by line, those with no line last.
func lineKey(p Problem) int {
	if p.Line == 0 {
		return int(^uint(0) >> 1)
	}
	return p.Line
}

// lookup returns the variable's value when it is set and not empty.
func lookup(env func(string) (string, bool), name string) string {
	v, ok := env(name)
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// resolvePaths makes the file's relative paths relative to dir; the store
// URL's dialect resolves a file path in it.
func (c *Config) resolvePaths(dir string, dialects StoreDialects) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	abs(&c.API.TokenFile)
	abs(&c.Store.URLFile)
	abs(&c.Metrics.PushgatewayTokenFile)
	if raw := c.Store.URL.Value(); raw != "" {
		c.Store.URL = NewConnURL(dialects.ResolveURL(raw, dir))
	}
	abs(&c.Notify.SMTP.PasswordFile)
	abs(&c.Notify.SMTP.CAFile)
	for i := range c.Tenants {
		c.Tenants[i].Source.resolvePaths(abs)
		for k := range c.Tenants[i].Notify.Webhooks {
			abs(&c.Tenants[i].Notify.Webhooks[k].URLFile)
		}
	}
}

// absStoreURL makes a relative file path in a store URL that did not come
// from the file (HRSYNC_STORE_URL, urlEnv, urlFile) absolute from the
// working directory, so that every command names the file it opens.
func (c *Config) absStoreURL(dialects StoreDialects) {
	raw := c.Store.URL.Value()
	if raw == "" {
		return
	}
	if wd, err := os.Getwd(); err == nil {
		c.Store.URL = NewConnURL(dialects.ResolveURL(raw, wd))
	}
}

// applyEnv applies the environment overrides and returns, for each field it
// set, the variable's name.
func (c *Config) applyEnv(env func(string) (string, bool)) map[string]string {
	set := map[string]string{}
	str := func(name, path string, dst *string) {
		if v := lookup(env, name); v != "" {
			*dst = v
			set[path] = name
		}
	}
	str(EnvAPIBaseURL, "api.baseUrl", &c.API.BaseURL)
	str(EnvAPITokenFile, "api.tokenFile", &c.API.TokenFile)
	str(EnvLogLevel, "log.level", &c.Log.Level)
	str(EnvLogFormat, "log.format", &c.Log.Format)
	str(EnvHTTPListen, "http.listen", &c.HTTP.Listen)
	str(EnvTimezone, "timezone", &c.Timezone)
	if v := lookup(env, EnvStoreURL); v != "" {
		c.Store = Store{URL: NewConnURL(v), Schema: c.Store.Schema}
		set["store.url"] = EnvStoreURL
	}
	if v := lookup(env, EnvPushgateway); v != "" {
		c.Metrics.Pushgateway = NewConnURL(v)
		set["metrics.pushgateway"] = EnvPushgateway
	}
	if v := lookup(env, EnvAPIToken); v != "" {
		c.API.Token = NewSecret(v)
		set["api.token"] = EnvAPIToken
	}
	return set
}

// resolveSecrets reads the secrets named by environment variables and files.
func (c *Config) resolveSecrets(env func(string) (string, bool), ps *problems) {
	switch {
	case c.Store.URLEnv != "" && c.Store.URLFile != "":
		ps.addf("store", "set at most one of urlEnv and urlFile")
	case c.Store.URLEnv != "":
		if v, ok := readEnvSecret(env, c.Store.URLEnv, "store.urlEnv", ps); ok {
			c.Store.URL = NewConnURL(v)
		}
	case c.Store.URLFile != "":
		if v, ok := readFileSecret(c.Store.URLFile, "store.urlFile", ps); ok {
			c.Store.URL = NewConnURL(v)
		}
	}
	if !c.API.Token.IsSet() && c.API.TokenFile != "" {
		if v, ok := readFileSecret(c.API.TokenFile, "api.tokenFile", ps); ok {
			c.API.Token = NewSecret(v)
		}
	}
	if c.Metrics.PushgatewayTokenFile != "" {
		if v, ok := readFileSecret(c.Metrics.PushgatewayTokenFile, "metrics.pushgatewayTokenFile", ps); ok {
			c.Metrics.PushgatewayToken = NewSecret(v)
		}
	}
	for i := range c.Tenants {
		c.Tenants[i].Source.resolveSecrets(fmt.Sprintf("tenants[%d].source", i), env, ps)
	}
	c.resolveNotifySecrets(env, ps)
}

// envName is the shape of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// readEnvSecret reads the variable named name, reporting a problem at path
// when it is unset or empty. The value is never part of a problem.
func readEnvSecret(env func(string) (string, bool), name, path string, ps *problems) (string, bool) {
	if !envName.MatchString(name) {
		ps.addf(path, "must be the name of an environment variable, such as HR_DB_DSN")
		return "", false
	}
	v := lookup(env, name)
	if v == "" {
		ps.addf(path, "environment variable %s is not set", name)
		return "", false
	}
	return v, true
}

// readFileSecret reads a mounted secret file, trimmed of surrounding white
// space, reporting a problem at path when it cannot. The content is never
// part of a problem.
func readFileSecret(name, path string, ps *problems) (string, bool) {
	data, err := os.ReadFile(name)
	if err != nil {
		ps.addf(path, "%s", readReason(err))
		return "", false
	}
	v := strings.TrimSpace(string(data))
	if v == "" {
		ps.addf(path, "file %s is empty", name)
		return "", false
	}
	return v, true
}

// readReason describes a failed read without the operating system's wording
// varying between platforms.
func readReason(err error) string {
	var pe *fs.PathError
	name := ""
	if errors.As(err, &pe) {
		name = pe.Path
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("file %s does not exist", name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("file %s cannot be read: permission denied", name)
	case pe != nil:
		return fmt.Sprintf("file %s cannot be read: %v", name, pe.Err)
	}
	return fmt.Sprintf("cannot read: %v", err)
}
