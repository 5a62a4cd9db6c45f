package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"sandtop/config"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Inspect sandtop's configuration",
		Args:  usageArgs(cobra.NoArgs),
	}
	c.AddCommand(&cobra.Command{
		Use:   "path",
		Short: "Print where sandtop looks for its config file, and whether it exists",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.configFile()
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), p)
			if _, err := os.Stat(p); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "(no file there yet; built-in defaults apply)")
			}
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Load the config file and report the first problem, if any",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if _, err := checkTUIConfig(cfg, os.Getenv); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: target %s, theme %s, %d named target(s)\n", cfg.Target, cfg.Theme, len(cfg.Targets))
			return nil
		},
	})
	return c
}

// configFile is --config, else the standard location.
func (g *globalFlags) configFile() (string, error) {
	if g.configPath != "" {
		return g.configPath, nil
	}
	return config.Path(os.Getenv)
}

// loadConfig reads the config file over the defaults.
func (g *globalFlags) loadConfig() (config.Config, error) {
	p, err := g.configFile()
	if err != nil {
		return config.Defaults(), err
	}
	return config.Load(p)
}
