package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"sandtop/backend/envd"
	"sandtop/backend/local"
	"sandtop/backend/seam"
	"sandtop/backend/target"
	"sandtop/config"
	"sandtop/sandbox"
)

// connection is one open sandbox for a CLI command. Closing it drops the
// connection only: the CLI never disposes the seam Runtime, because
// disposal terminates what it spawned and quitting must leave remote work
// running.
type connection struct {
	*target.Connection
	cfg      config.Config
	sel      selection
	readOnly bool
}

// openConnection loads the config, resolves the target flags and connects.
func openConnection(ctx context.Context, g *globalFlags) (*connection, error) {
	r, err := resolveTarget(ctx, g)
	if err != nil {
		return nil, err
	}
	return r.open(ctx)
}

// resolved is the one sandbox a command works on, found but not dialled.
type resolved struct {
	target.Target
	cfg      config.Config
	sel      selection
	readOnly bool
	logger   *slog.Logger
	// unchecked: the local daemon was found but not probed; open's first
	// call stands in for the probe.
	unchecked bool
}

// resolveTarget loads the config and resolves the target flags to exactly
// one sandbox, without connecting to it.
func resolveTarget(ctx context.Context, g *globalFlags) (resolved, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return resolved{}, err
	}
	sel, err := g.target.resolve(cfg)
	if err != nil {
		return resolved{}, err
	}
	return resolveSelection(ctx, g, cfg, sel)
}

// resolveNamedTarget resolves a sandbox by the name ls -A gives it (the
// SANDBOX of SANDBOX/PGID), without connecting to it.
func resolveNamedTarget(ctx context.Context, g *globalFlags, name string) (resolved, error) {
	cfg, err := g.loadConfig()
	if err != nil {
		return resolved{}, err
	}
	sel, err := g.target.named(cfg, name)
	if err != nil {
		return resolved{}, err
	}
	return resolveSelection(ctx, g, cfg, sel)
}

// resolveSelection lists the one sandbox sel names.
func resolveSelection(ctx context.Context, g *globalFlags, cfg config.Config, sel selection) (resolved, error) {
	ts, err := sel.targetsUnchecked(ctx)
	if err != nil {
		return resolved{}, err
	}
	if len(ts) == 0 && sel.isKube() {
		return resolved{}, noPodErr(sel.cfg.Kube)
	}
	if len(ts) != 1 {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Name
		}
		return resolved{}, usagef(fmt.Errorf("this command works on one sandbox and %d matched (%s); name one (ls -A lists them all)", len(ts), strings.Join(names, ", ")))
	}
	g.logger().Debug("opening sandbox", "target", ts[0].Name)
	return resolved{Target: ts[0], cfg: cfg, sel: sel, readOnly: sel.readOnly || g.readOnly, logger: g.logger(),
		unchecked: sel.startLocal}, nil
}

// open dials the resolved sandbox; opts go to the envd client. On a local
// daemon that was not probed (unchecked), the first call (Hello) is the
// probe: bounded by local.ProbeTimeout, and should it fail (no daemon, a
// stale socket, a daemon that accepts but does not answer), the daemon is
// checked, started or replaced as a probe would have had it, and the
// sandbox opened again.
func (r resolved) open(ctx context.Context, opts ...envd.Option) (*connection, error) {
	if r.unchecked {
		octx, cancel := context.WithTimeout(ctx, local.ProbeTimeout)
		s, err := r.dial(octx, opts...)
		cancel()
		if err == nil || ctx.Err() != nil {
			return s, err
		}
		r.logger.Debug("the local daemon did not answer; checking it", "err", err)
		if _, err := ensureLocal(ctx, true); err != nil {
			return nil, err
		}
	}
	return r.dial(ctx, opts...)
}

// dial opens the resolved sandbox.
func (r resolved) dial(ctx context.Context, opts ...envd.Option) (*connection, error) {
	if strings.HasPrefix(r.Endpoint, "unix:") {
		// A command makes a few calls in turn (hello, a look-up, the
		// start), and over HTTP/1.1 they share one connection with no
		// setup, where h2c first exchanges a preface and settings and
		// builds header tables on both ends. Its streams (Start, Connect)
		// go over HTTP/1.1 either way; opts may still replace the client.
		opts = append([]envd.Option{envd.WithHTTP1()}, opts...)
	}
	opened, err := target.Open(ctx, r.Target, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Logger: r.logger}, opts...)
	if err != nil {
		r.logger.Debug("open failed", "target", r.Name, "err", err)
		return nil, err
	}
	s := &connection{Connection: opened, cfg: r.cfg, sel: r.sel, readOnly: r.readOnly}
	warnDaemonVersion(ctx, s)
	return s, nil
}

func (s *connection) Close() { s.Connection.Close() }

// mutable refuses a change to a read-only target.
func (s *connection) mutable(what string) error {
	if s.readOnly {
		return fmt.Errorf("cannot %s: target %s is read-only (--read-only or read_only in the config)", what, s.Target.Name)
	}
	return nil
}

// spawnCwd is the working directory for a spawn: the flag, made absolute
// against the caller's directory on the local sandbox (which shares this
// machine's filesystem); on a remote sandbox it must already be absolute.
// Empty means the caller's directory locally, the target's default
// elsewhere.
func (s *connection) spawnCwd(flag string) (string, error) {
	local := s.sel.startLocal || s.Target.Kind == target.KindLocal
	switch {
	case flag == "" && local:
		return cwd(), nil
	case flag == "":
		if s.Target.Cwd != "" {
			return s.Target.Cwd, nil
		}
		return "/", nil
	case filepath.IsAbs(flag):
		return filepath.Clean(flag), nil
	case local:
		return filepath.Join(cwd(), flag), nil
	}
	return "", usagef(fmt.Errorf("--cwd %q must be an absolute path in a remote sandbox", flag))
}

// grace is the configured teardown grace.
func (s *connection) grace() time.Duration {
	if g := s.cfg.Grace; g > 0 {
		return g
	}
	return config.Defaults().Grace
}

// groupByPgid finds a group as ls shows it: a live one before a finished
// one of the same pgid.
func (s *connection) groupByPgid(ctx context.Context, pgid int) (sandbox.Group, error) {
	snap, err := s.Runtime.Snapshot(ctx, seam.WatchOptions{})
	if err != nil {
		return sandbox.Group{}, err
	}
	for _, g := range snap.Groups { // the live ones come first
		if g.PGID == pgid {
			return g, nil
		}
	}
	return sandbox.Group{}, errNoGroup(pgid)
}

func errNoGroup(pgid int) error {
	return fmt.Errorf("no process group %d in this sandbox (see 'sandtop ls')", pgid)
}
