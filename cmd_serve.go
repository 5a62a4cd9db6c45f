package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/daemon"
	"sandtop/backend/local"
)

// serveFlags are "sandtop serve"'s own flags.
type serveFlags struct {
	listen      string
	tokenFile   string
	compat      string
	stateDir    string
	replayBytes int
	verbose     bool
}

func newServeCmd() *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve --listen unix:PATH|HOST:PORT [--token-file F]",
		Short: "Run the sandbox daemon in the foreground (for containers and pods)",
		Long: `Runs sandtop's sandbox daemon in the foreground. It serves envd's process
service (so E2B's SDKs can drive it too) and sandtop's Supervisor extension.

A token is required whenever the daemon listens beyond loopback, or on a
unix socket in a directory others can enter. Clients send it as
X-Access-Token; sandtop reads it with --envd URL --token-file F.

SIGTERM or SIGINT stops serving; the processes keep running (terminals end
with their PTY). The embedded local sandbox runs this same command,
detached.`,
		Example: `  sandtop serve --listen 0.0.0.0:49983 --token-file /run/secrets/sandtop-token
  sandtop serve --listen unix:/run/sandtop/daemon.sock --state-dir /var/lib/sandtop`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), f)
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.listen, "listen", "", "unix:PATH or HOST:PORT (required)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the access token clients must send")
	fs.StringVar(&f.compat, "compat", "", `"envd": serve only envd's process service, no extension (for testing fallbacks)`)
	fs.StringVar(&f.stateDir, "state-dir", "", "where the daemon keeps its state (default: the local sandbox's state dir)")
	fs.IntVar(&f.replayBytes, "replay-bytes", 0, "recent output each process keeps for re-attach (default 256 KiB)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log every request")
	return c
}

func runServe(ctx context.Context, f *serveFlags) error {
	if f.listen == "" {
		return usagef(errors.New("serve needs --listen unix:PATH or --listen HOST:PORT"))
	}
	if f.compat != "" && f.compat != "envd" {
		return usagef(fmt.Errorf("--compat %q: the only mode is \"envd\"", f.compat))
	}
	if f.replayBytes < 0 {
		return usagef(fmt.Errorf("--replay-bytes %d must not be negative", f.replayBytes))
	}
	token := ""
	if f.tokenFile != "" {
		var err error
		if token, err = readTokenFile(f.tokenFile); err != nil {
			return err
		}
	}
	stateDir := f.stateDir
	if stateDir == "" {
		p, err := local.DefaultPaths()
		if err != nil {
			return err
		}
		stateDir = p.StateDir
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	d, err := daemon.New(daemon.Config{
		RuntimeRoot:    filepath.Join(stateDir, "runtime"),
		Env:            sandboxEnv(os.Environ()),
		Compat:         f.compat == "envd",
		ReplayBytes:    f.replayBytes,
		Token:          token,
		Logger:         logger,
		ReapAllOrphans: true,
	})
	if err != nil {
		return err
	}
	ln, err := daemon.Listen(f.listen, token)
	if err != nil {
		return err
	}
	logger.Info("sandtop daemon serving", "version", version, "listen", f.listen, "pid", os.Getpid(),
		"runtime_root", d.RuntimeRoot(), "token", token != "", "compat", f.compat)
	served := make(chan error, 1)
	go func() { served <- d.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("stopping: processes keep running")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = d.Shutdown(sctx)
	if unixPath, ok := strings.CutPrefix(f.listen, "unix:"); ok {
		_ = os.Remove(unixPath)
	}
	return err
}

// sandboxEnv is the base environment of every process the daemon starts:
// the daemon's own, minus sandtop's variables and anything
// credential-shaped. (The local daemon's environment is curated further
// before it is even started; see local.CuratedEnv.)
func sandboxEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.HasPrefix(name, "SANDTOP_") || local.CredentialShaped(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// readTokenFile reads a token: one non-empty line, surrounding space
// trimmed. Group-readable files are accepted: secret volumes in pods are
// 0644 by default.
func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--token-file %s is empty", path)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("--token-file %s holds more than one line", path)
	}
	return tok, nil
}
