package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"sandtop/backend/daemon"
	"sandtop/backend/local"
	"sandtop/buildinfo"
	"sandtop/config"
)

// serveFlags are "sandtop serve"'s own flags.
type serveFlags struct {
	listen     string
	tokenFile  string
	compat     string
	stateDir   string
	killOnExit bool
	tlsCert    string
	tlsKey     string
	memDumps   string
}

// envTokenFile is --token-file's default for serve: a pod mounts the
// token Secret and says where, without a flag in its command.
const envTokenFile = "SANDTOP_TOKEN_FILE"

func newServeCmd() *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve --listen unix:PATH|HOST:PORT [--token-file F]",
		Short: "Run the sandbox daemon in the foreground (for containers and pods)",
		Long: `Runs sandtop's sandbox daemon in the foreground. It serves envd's process
service (so E2B's SDKs can drive it too) and sandtop's Supervisor extension.

A token is required whenever the daemon listens beyond loopback, or on a
unix socket in a directory others can enter. Clients send it as
X-Access-Token; sandtop reads it with --envd URL --token-file F. The
token file may also be given as $SANDTOP_TOKEN_FILE (a pod mounts its
Secret there). With --tls-cert and --tls-key it serves TLS, for clients
that dial it directly (sandtop --envd https://... --ca-file CA). Without a
token, loopback TCP serves only connections from the daemon's own user.
Children get an allowlisted environment, and serve drops everything else
from its own once its flags are read.

SIGTERM or SIGINT stops serving; the processes keep running (terminals end
with their PTY) unless --kill-on-exit. The embedded local sandbox runs this
same command, detached.`,
		Example: `  sandtop serve --listen 0.0.0.0:49983 --token-file /run/secrets/sandtop-token
  sandtop serve --listen unix:/run/sandtop/daemon.sock --state-dir /var/lib/sandtop`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), cmd.ErrOrStderr(), f)
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.listen, "listen", "", "unix:PATH or HOST:PORT (required)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the access token clients must send")
	fs.StringVar(&f.compat, "compat", "", `"envd": serve only envd's process service, no extension (for testing fallbacks)`)
	fs.StringVar(&f.stateDir, "state-dir", "", "holds the runtime root and daemon.log (default: the local sandbox's state dir)")
	fs.BoolVar(&f.killOnExit, "kill-on-exit", false, "SIGKILL every managed process group when the daemon stops")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve TLS with this certificate (PEM), for clients that dial directly (sandtop --ca-file); needs --tls-key")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key (PEM) of --tls-cert")
	// For measuring the daemon's memory (go run ./bench -sdk-memory).
	fs.StringVar(&f.memDumps, "memory-dumps", "", "on each SIGUSR1 write the Go runtime's memory figures and a heap profile into this directory")
	_ = fs.MarkHidden("memory-dumps")
	return c
}

// runServe checks the flags and hands over to the daemon's serve entry.
func runServe(ctx context.Context, stderr io.Writer, f *serveFlags) error {
	if f.listen == "" {
		return usagef(errors.New("serve needs --listen unix:PATH or --listen HOST:PORT"))
	}
	if f.compat != "" && f.compat != "envd" {
		return usagef(fmt.Errorf("--compat %q: the only mode is \"envd\"", f.compat))
	}
	args := os.Args
	if f.tokenFile == "" && os.Getenv(envTokenFile) != "" {
		// The clean environment below drops the variable, so the restart
		// gets it as the flag.
		f.tokenFile = os.Getenv(envTokenFile)
		args = append(slices.Clone(os.Args), "--token-file="+f.tokenFile)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef(errors.New("--tls-cert and --tls-key go together"))
	}
	if f.tlsCert != "" && strings.HasPrefix(f.listen, "unix:") {
		return usagef(errors.New("--tls-cert is for --listen HOST:PORT; a unix socket needs no TLS"))
	}
	if f.tokenFile != "" {
		// Read it here too, for a one-line error naming the flag.
		if _, err := config.ReadTokenFile(f.tokenFile); err != nil {
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
	// The configuration is read: from here on the daemon's own environment
	// holds only what its children may see too, so /proc/<daemon>/environ
	// has no secret left for a child to read.
	kept := local.CuratedEnv(os.Environ())
	if err := scrubEnv(kept, args); err != nil {
		return err
	}
	err := daemon.RunServe(ctx, daemon.ServeOptions{
		Listen:      f.listen,
		TokenFile:   f.tokenFile,
		Compat:      f.compat == "envd",
		StateDir:    stateDir,
		KillOnExit:  f.killOnExit,
		TLSCert:     f.tlsCert,
		TLSKey:      f.tlsKey,
		Env:         sandboxEnv(kept),
		MemoryDumps: f.memDumps,
		Ready: func(addr string) {
			fmt.Fprintf(stderr, "sandtop daemon %s (pid %d) listening on %s, state in %s\n", buildinfo.Version(), os.Getpid(), addr, stateDir)
		},
	})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// sandboxEnv is the base environment of every process the daemon starts:
// the allowlist the local daemon is started with (local.CuratedEnv), minus
// sandtop's own variables.
func sandboxEnv(curated []string) []string {
	var out []string
	for _, kv := range curated {
		if !strings.HasPrefix(kv, "SANDTOP_") {
			out = append(out, kv)
		}
	}
	return out
}

// scrubEnv makes keep this process's whole environment. Unsetting is not
// enough: /proc/<pid>/environ shows the environment the process was
// started with, so serve starts itself again, same pid, with keep only.
// The second time round there is nothing to drop and it goes on.
func scrubEnv(keep, args []string) error {
	if slices.Equal(os.Environ(), keep) {
		return nil
	}
	if err := syscall.Exec("/proc/self/exe", args, keep); err != nil {
		return fmt.Errorf("serve: restart with a clean environment: %w", err)
	}
	return nil
}
