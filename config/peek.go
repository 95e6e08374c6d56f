package config

import (
	"os"

	"gopkg.in/yaml.v3"
)

// PeekLog returns the log settings a configuration asks for as far as they
// can be read, for a command whose configuration cannot be loaded to say
// so in the format it asked for: HRSYNC_LOG_FORMAT and HRSYNC_LOG_LEVEL,
// else the file's log section when the file (path, or the one
// HRSYNC_CONFIG names) is YAML, else the defaults. Nothing is checked. env
// looks variables up; nil means os.LookupEnv.
func PeekLog(path string, env func(string) (string, bool)) Log {
	if env == nil {
		env = os.LookupEnv
	}
	out := Default().Log
	if path == "" {
		path = lookup(env, EnvConfig)
	}
	if data, err := os.ReadFile(path); path != "" && err == nil {
		var file struct {
			Log Log `yaml:"log"`
		}
		if yaml.Unmarshal(data, &file) == nil {
			if file.Log.Format != "" {
				out.Format = file.Log.Format
			}
			if file.Log.Level != "" {
				out.Level = file.Log.Level
			}
		}
	}
	if v := lookup(env, EnvLogFormat); v != "" {
		out.Format = v
	}
	if v := lookup(env, EnvLogLevel); v != "" {
		out.Level = v
	}
	return out
}
