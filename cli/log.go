package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"sandtop/backend/local"
)

// envDebug turns the client's debug log on, to stderr unless --log-file
// names a file.
const envDebug = "SANDTOP_DEBUG"

// startLog opens the client's debug log (log/slog): --log-file, or stderr
// with SANDTOP_DEBUG set; otherwise a logger that discards. The TUI and
// the seam runtime log through it too.
func (g *globalFlags) startLog(cmd *cobra.Command) error {
	var w io.Writer
	switch {
	case g.logFile != "":
		f, err := os.OpenFile(g.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return usagef(fmt.Errorf("--log-file: %w", err))
		}
		w = f // stays open until the process exits
	case os.Getenv(envDebug) != "" && os.Getenv(envDebug) != "0" && drawsOnTerminal(cmd):
		// The TUI owns the terminal: its log goes next to the daemon's.
		p, err := local.DefaultPaths()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(p.StateDir, "client.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		w = f
	case os.Getenv(envDebug) != "" && os.Getenv(envDebug) != "0":
		w = cmd.ErrOrStderr()
	default:
		g.log = slog.New(slog.DiscardHandler)
		return nil
	}
	g.log = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.log.Debug("sandtop starting", "command", cmd.CommandPath(), "version", versionString())
	return nil
}

// drawsOnTerminal says whether cmd takes the screen (the TUI, attach).
func drawsOnTerminal(cmd *cobra.Command) bool {
	return cmd == cmd.Root() || cmd.Name() == "demo" || cmd.Name() == "attach"
}

// logger is the debug log, discarding before startLog ran (tests).
func (g *globalFlags) logger() *slog.Logger {
	if g.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.log
}
