package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/local"
)

// exitNotRunning is "daemon status" when no daemon answers (as systemctl
// status uses 3 for a stopped unit).
const exitNotRunning = 3

func newDaemonCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "daemon",
		Short: "Manage the embedded local sandbox's daemon",
		Long: `The local sandbox's daemon starts on first use (like tmux's server), detached,
on a private unix socket. These commands report on it and stop it.`,
		Args: usageArgs(cobra.NoArgs),
	}
	c.AddCommand(newDaemonStatusCmd(), newDaemonStartCmd(), newDaemonStopCmd(g))
	return c
}

// daemonStatusJSON is "daemon status -o json".
type daemonStatusJSON struct {
	Version    int    `json:"version"`
	Running    bool   `json:"running"`
	PID        int    `json:"pid,omitempty"`
	Socket     string `json:"socket"`
	StateDir   string `json:"state_dir"`
	LogFile    string `json:"log_file"`
	Error      string `json:"error,omitempty"`
	RuntimeDir string `json:"runtime_dir"`
}

func newDaemonStatusCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "status",
		Short: "Say whether the local daemon runs, with its pid, socket and log (exit 3 when not running)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputFormat(out, "text", "json"); err != nil {
				return err
			}
			p, err := local.DefaultPaths()
			if err != nil {
				return err
			}
			st, err := local.Check(cmd.Context(), p)
			j := daemonStatusJSON{Version: jsonVersion, Running: err == nil, PID: st.PID, Socket: p.Socket(),
				StateDir: p.StateDir, LogFile: p.LogFile(), RuntimeDir: p.RuntimeDir}
			if err != nil && !errors.Is(err, local.ErrNotRunning) {
				j.Error = err.Error()
			}
			w := cmd.OutOrStdout()
			if out == "json" {
				if err := writeJSON(w, j); err != nil {
					return err
				}
			} else if j.Running {
				fmt.Fprintf(w, "running  pid %d\nsocket   %s\nstate    %s\nlog      %s\n", j.PID, j.Socket, j.StateDir, j.LogFile)
			} else {
				fmt.Fprintf(w, "not running (socket %s)\n", j.Socket)
				if j.Error != "" {
					fmt.Fprintln(w, j.Error)
				}
			}
			if !j.Running {
				return exitCodeError{code: exitNotRunning}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "text", "output format: text or json")
	return c
}

func newDaemonStartCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "start",
		Short: "Start the local daemon if it is not running (any sandtop command does this on demand)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := ensureLocalDaemon(cmd.Context())
			if err != nil {
				return err
			}
			verb := "already running"
			if st.Started {
				verb = "started"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: pid %d on %s (log %s)\n", verb, st.PID, st.Socket, st.LogFile)
			return nil
		},
	}
}

func newDaemonStopCmd(g *globalFlags) *cobra.Command {
	var grace time.Duration
	var keep bool
	c := &cobra.Command{
		Use:   "stop",
		Short: "Tear down the local sandbox's process groups, then stop its daemon",
		Long: `Stops the local daemon like tmux's kill-server: every process group the daemon
started is torn down first (SIGTERM, grace, SIGKILL), then the daemon gets
SIGTERM. With --keep-processes only the daemon stops; its non-terminal
processes keep running and the next daemon finds them again.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := local.DefaultPaths()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if _, err := local.Check(cmd.Context(), p); errors.Is(err, local.ErrNotRunning) {
				fmt.Fprintln(w, "not running")
				return nil
			}
			if !keep {
				if err := teardownLocalWork(cmd, g, grace); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "sandtop: warning: "+oneLine(err.Error()))
				}
			}
			pid, err := local.Stop(cmd.Context(), p, 5*time.Second)
			if errors.Is(err, local.ErrNotRunning) {
				fmt.Fprintln(w, "not running")
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "stopped daemon pid %d\n", pid)
			return nil
		},
	}
	c.Flags().DurationVar(&grace, "grace", 2*time.Second, "SIGTERM-to-SIGKILL wait for each group")
	c.Flags().BoolVar(&keep, "keep-processes", false, "stop only the daemon and leave its processes running")
	return c
}

// uncheckedLocalDaemon is where the local daemon listens, its directories
// prepared, without a probe (see local.Unchecked).
func uncheckedLocalDaemon() (local.Status, error) {
	p, err := local.DefaultPaths()
	if err != nil {
		return local.Status{}, err
	}
	return local.Unchecked(local.Options{Paths: p})
}

// ensureLocalDaemon finds or starts the local daemon from this binary.
func ensureLocalDaemon(ctx context.Context) (local.Status, error) {
	return ensureLocal(ctx, false)
}

// ensureLocal is ensureLocalDaemon; suspect says a call just found the
// daemon not answering (see local.Options.Suspect).
func ensureLocal(ctx context.Context, suspect bool) (local.Status, error) {
	p, err := local.DefaultPaths()
	if err != nil {
		return local.Status{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return local.Status{}, fmt.Errorf("find the sandtop binary: %w", err)
	}
	return local.EnsureRunning(ctx, local.Options{Paths: p, Executable: exe, Suspect: suspect})
}
