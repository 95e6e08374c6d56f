package main

import (
	"fmt"
	"hrsync/store"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"hrsync/config"
	"hrsync/sources/registry"
)

// newConfigCmd groups the commands that check and print the configuration.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check or print the configuration",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newConfigCheckCmd(), newConfigShowCmd())
	return cmd
}

// configFlag adds --config to a config sub-command.
func configFlag(cmd *cobra.Command) {
	cmd.Flags().String("config", "", "configuration file (default $"+config.EnvConfig+")")
}

// loadConfigFlag loads the file --config names, with the process's
// environment, checking the drop folders as checks asks; a problem exits
// with the configuration code.
func loadConfigFlag(cmd *cobra.Command, checks config.Checks) (*config.Config, string, error) {
	path, _ := cmd.Flags().GetString("config")
	cfg, err := config.LoadChecked(path, nil, registry.Kinds{}, store.Dialects{}, checks)
	if err != nil {
		return nil, "", configError(cmd, path, err)
	}
	if path == "" {
		path = "$" + config.EnvConfig
	}
	return cfg, path, nil
}

func newConfigCheckCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Load and validate the configuration, listing every problem",
		Long: `check loads the configuration as every other command does (file, environment
overrides, secrets), checks that each CSV drop folder is a readable and writable
folder, with processed/ and failed/ writable or creatable, and lists every
problem with its field path and line. It prints where the state lives.
It exits 0 when the configuration is valid and 2 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, path, err := loadConfigFlag(cmd, config.Checks{Folders: config.FoldersWritable})
			if err != nil {
				return err
			}
			return printCheck(cmd.OutOrStdout(), path, cfg)
		},
	}
	configFlag(cmd)
	return cmd
}

// printCheck summarizes a valid configuration: its tenants, where the state
// lives, each drop folder, and which secrets are set.
func printCheck(w io.Writer, path string, cfg *config.Config) error {
	names := make([]string, 0, len(cfg.Tenants))
	for _, t := range cfg.Tenants {
		names = append(names, t.Name+" ("+t.Source.Kind()+")")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "configuration %s is valid: %d tenant(s): %s\n", path, len(cfg.Tenants), strings.Join(names, ", "))
	fmt.Fprintf(&b, "  state: %s\n", stateStatus(cfg.Store))
	for _, t := range cfg.Tenants {
		if o, err := registry.Of(t.Source.Options); err == nil && o.Describe() != "" {
			fmt.Fprintf(&b, "  tenant %s: %s\n", t.Name, o.Describe())
		}
	}
	if line := scimStatus(cfg); line != "" {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	for _, line := range secretStatus(cfg) {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// scimStatus says where the daemon serves the SCIM endpoint and for which
// tenants, "" when it serves none.
func scimStatus(cfg *config.Config) string {
	if cfg.SCIM.Listen == "" {
		return ""
	}
	names := make([]string, 0, len(cfg.Tenants))
	for _, t := range cfg.SCIMTenants() {
		names = append(names, t.Name)
	}
	return fmt.Sprintf("scim endpoint: hrsync daemon serves it on %s for %s; people jobs run %s after a tenant's last write",
		cfg.SCIM.Listen, strings.Join(names, ", "), cfg.SCIM.Settle)
}

// stateStatus says where the state lives and, when it lives in a local
// file, whether the file exists yet.
func stateStatus(s config.Store) string {
	where := s.Location()
	if _, missing, ok := s.StateFile(); ok && missing {
		return where + " (not created yet: the first run or hrsync migrate creates it)"
	}
	return where
}

// secretStatus says which secrets are set, never their values.
func secretStatus(cfg *config.Config) []string {
	status := "api token: set"
	if !cfg.API.Token.IsSet() {
		status = "api token: not set (commands that call the platform need " + config.EnvAPIToken + " or api.tokenFile)"
	}
	lines := []string{status}
	if cfg.API.InsecureHTTP() {
		lines = append(lines, "WARNING: api.allowInsecureHTTP: the API token is sent in clear over plain HTTP to "+cfg.API.BaseURL)
	}
	for _, t := range cfg.Tenants {
		if o, err := registry.Of(t.Source.Options); err == nil {
			for _, secret := range o.SecretsSet() {
				lines = append(lines, fmt.Sprintf("tenant %s: %s set", t.Name, secret))
			}
		}
	}
	return lines
}

func newConfigShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration as YAML (or JSON), secrets redacted",
		Long: `show prints the configuration hrsync would run with: defaults filled in,
environment overrides applied, relative paths resolved. Tokens and DSNs are
shown as [redacted] or left out, and passwords in URLs as xxxxx. -o json prints
{"file", "apiTokenSet", "config"} with the same keys as the YAML file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(cmd)
			if err != nil {
				return err
			}
			cfg, path, err := loadConfigFlag(cmd, config.Checks{})
			if err != nil {
				return err
			}
			out, err := cfg.YAML()
			if err != nil {
				return fmt.Errorf("render configuration: %w", err)
			}
			if format == outputJSON {
				return printConfigJSON(cmd, cfg, out)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# effective configuration of %s, secrets redacted\n", path)
			if line := scimStatus(cfg); line != "" {
				fmt.Fprintf(&b, "# %s\n", line)
			}
			for _, line := range secretStatus(cfg) {
				fmt.Fprintf(&b, "# %s\n", line)
			}
			b.Write(out)
			_, err = io.WriteString(cmd.OutOrStdout(), b.String())
			return err
		},
	}
	configFlag(cmd)
	addOutputFlag(cmd)
	return cmd
}

// configOutput is what `hrsync config show -o json` prints.
type configOutput struct {
	// File is the configuration file read (--config or $HRSYNC_CONFIG).
	File string `json:"file"`
	// APITokenSet says whether the API token is set, never its value.
	APITokenSet bool `json:"apiTokenSet"`
	// Config is the effective configuration, secrets redacted, with the
	// keys of the YAML file.
	Config any `json:"config"`
}

// printConfigJSON prints the effective configuration, rendered as YAML
// (redacted) by the config package, as JSON with the same keys.
func printConfigJSON(cmd *cobra.Command, cfg *config.Config, rendered []byte) error {
	var tree any
	if err := yaml.Unmarshal(rendered, &tree); err != nil {
		return fmt.Errorf("render configuration as JSON: %w", err)
	}
	file, _ := cmd.Flags().GetString("config")
	if file == "" {
		file = os.Getenv(config.EnvConfig)
	}
	return printJSON(cmd.OutOrStdout(), configOutput{File: file, APITokenSet: cfg.API.Token.IsSet(), Config: tree})
}
