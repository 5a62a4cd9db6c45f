package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/local"
	"sandtop/buildinfo"
)

func versionString() string {
	return fmt.Sprintf("%s (%s, %s/%s)", buildinfo.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// versionDoc is what "version -o json" prints.
type versionDoc struct {
	Version int    `json:"version"`
	Client  string `json:"client"`
	Commit  string `json:"commit,omitempty"`
	Go      string `json:"go"`
	// Daemon is the version the running local daemon reports; empty when
	// none runs (version never starts one).
	Daemon string `json:"daemon,omitempty"`
}

func newVersionCmd(g *globalFlags) *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "version",
		Short: "Print sandtop's version and commit, and the running local daemon's",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutputFormat(out, "text", "json"); err != nil {
				return err
			}
			doc := versionDoc{Version: jsonVersion, Client: buildinfo.Version(), Commit: buildinfo.Commit(), Go: runtime.Version()}
			doc.Daemon = runningDaemonVersion(cmd.Context(), g)
			w := cmd.OutOrStdout()
			if out == "json" {
				return writeJSON(w, doc)
			}
			fmt.Fprintln(w, "sandtop "+versionString())
			if doc.Commit == "" {
				fmt.Fprintln(w, "commit  unknown (built without VCS stamping: go run, -buildvcs=false, a git worktree)")
			}
			switch {
			case doc.Daemon == "":
				fmt.Fprintln(w, "daemon  not running")
			case doc.Daemon != doc.Client:
				fmt.Fprintf(w, "daemon  %s (a different build: 'sandtop daemon stop' ends it, with its work)\n", doc.Daemon)
			default:
				fmt.Fprintf(w, "daemon  %s\n", doc.Daemon)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "text", "output format: text or json")
	_ = c.RegisterFlagCompletionFunc("output", fixedCompletion("text", "json"))
	return c
}

// runningDaemonVersion asks the local daemon for its version, without
// starting one; "" when none answers.
func runningDaemonVersion(ctx context.Context, g *globalFlags) string {
	p, err := local.DefaultPaths()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := local.Check(ctx, p); err != nil {
		return ""
	}
	lg := *g
	lg.target = targetFlags{names: []string{"local"}}
	s, err := openConnection(ctx, &lg)
	if err != nil {
		return ""
	}
	defer s.Close()
	return daemonVersion(ctx, s)
}

// daemonVersion is what the connection's daemon reports through Hello; ""
// on stock envd.
func daemonVersion(ctx context.Context, s *connection) string {
	if !s.Extension {
		return ""
	}
	return s.Runtime.Info().Version
}

var warnVersionOnce sync.Once

// warnDaemonVersion says once per command, on stderr, that the local
// daemon runs a different build than this client (as tmux does), since it
// keeps serving after an upgrade until it is stopped.
func warnDaemonVersion(ctx context.Context, s *connection) {
	if !s.sel.startLocal {
		return
	}
	warnVersionOnce.Do(func() {
		if v := daemonVersion(ctx, s); v != "" && v != buildinfo.Version() {
			fmt.Fprintf(os.Stderr, "sandtop: warning: the local daemon is %s and this sandtop is %s; 'sandtop daemon stop' ends the old one (and its work)\n", v, buildinfo.Version())
		}
	})
}
