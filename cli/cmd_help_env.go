package cli

import (
	"github.com/spf13/cobra"
)

// newEnvironmentHelp is "sandtop help environment": every variable sandtop
// reads, in one place.
func newEnvironmentHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "environment",
		Short: "The environment variables sandtop reads",
		Long: `Environment variables

  SANDTOP_TARGET       the sandbox to use when no --target, --socket, --envd
                       or --e2b flag names one: "local" or a [targets] name
  SANDTOP_CONFIG       the config file (default $XDG_CONFIG_HOME/sandtop/config.toml)
  SANDTOP_DEBUG        set (not 0): write a debug log to stderr (the TUI's to
                       $SANDTOP_STATE_DIR/client.log); --log-file picks the file
  SANDTOP_RUNTIME_DIR  where the local daemon's socket lives
                       (default $XDG_RUNTIME_DIR/sandtop)
  SANDTOP_STATE_DIR    where the local daemon keeps its state and log
                       (default $XDG_STATE_HOME/sandtop)
  SANDTOP_TOKEN_FILE   sandtop serve: the token file when --token-file is not
                       given (a pod's mounted Secret)
  KUBECONFIG           the kubeconfig files for --kube, as kubectl reads them
                       (default ~/.kube/config, else the pod's service account)
  XDG_CONFIG_HOME      the config directory; user themes are read from
                       $XDG_CONFIG_HOME/sandtop/themes/NAME.toml
  XDG_RUNTIME_DIR      see SANDTOP_RUNTIME_DIR
  XDG_STATE_HOME       see SANDTOP_STATE_DIR
  E2B_API_KEY          the E2B team's key, for --e2b
  E2B_DOMAIN           E2B's domain (default e2b.app)
  E2B_API_URL          E2B's control API (default https://api.<domain>)
  E2B_SANDBOX_URL      one URL for every E2B sandbox's daemon (a proxy)
  E2B_DEBUG            true: E2B's local mode
  NO_COLOR             set: no colours in the TUI's chrome`,
		// No Run: cobra lists it as a help topic, "sandtop help environment".
	}
}
