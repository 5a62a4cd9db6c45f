package uisource

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"sandtop/backend/seam"
	"sandtop/sandbox"
	"sandtop/ui"
	"sandtop/wrapper"
)

// Stock envd keeps no output for late subscribers: attaching there shows
// only what the program writes from now on. The pane says so first, in
// the stream itself, so the operator does not take a blank pane for a hang.
const (
	noReplayTerminal = "\x1b[90m[compat: stock envd keeps no replay; only new output appears below]\x1b[0m\r\n"
	noReplayOutput   = "[compat: stock envd keeps no replay; only new output appears below]\n"
)

// Output streams a group leader's output through the seam. A group whose
// supervisor keeps its output with arrival marks (sandtop's shim, or its
// standalone supervisor on a stock envd) is read back from its state
// directory and followed there, every piece with the time it arrived in
// the sandbox. Any other (the bash wrapper's, another client's group) is
// the daemon's replay of recent output, then live bytes, without times.
// Closing it only unsubscribes.
func (s *backendSource) Output(ctx context.Context, pid int) (ui.OutputStream, error) {
	if g, ok := s.groupOf(ctx, pid); ok && g.stateDir != "" {
		rd := s.rt.OutputLog(g.stateDir)
		if err := rd.Probe(ctx); err == nil && rd.Marked() && s.keptFits(ctx, g.stateDir) {
			poll := keptPoll
			if s.compat {
				poll = keptPollCompat
			}
			// The live stream carries on where the kept output stops (a
			// full spill); without it the kept output is all there is.
			live, _ := s.rt.Output(ctx, pid)
			return newKeptStream(ctx, s.rt, g.pgid, rd, poll, live), nil
		}
	}
	r, err := s.rt.Output(ctx, pid)
	if err != nil {
		return nil, err
	}
	if s.compat {
		return ui.ReaderStream(&noticed{Reader: io.MultiReader(strings.NewReader(noReplayOutput), r), Closer: r}), nil
	}
	return ui.ReaderStream(r), nil
}

// keptFits says whether the output kept in stateDir is small enough to
// read back from its start (keptBudget).
func (s *backendSource) keptFits(ctx context.Context, stateDir string) bool {
	var total int64
	for _, name := range []string{wrapper.StdoutSpillFile, wrapper.StderrSpillFile} {
		_, size, err := s.rt.ReadStateFile(ctx, stateDir, name, 0, 1)
		if err == nil {
			total += size
		}
	}
	return total <= keptBudget
}

// keptGroup is what Output needs to know of a group to read what it kept.
type keptGroup struct {
	pgid     int
	stateDir string
}

// groupOf finds the group whose leader is pid: in the last snapshot a
// watch delivered, else among the groups published in the sandbox.
func (s *backendSource) groupOf(ctx context.Context, pid int) (keptGroup, bool) {
	s.mu.Lock()
	g, ok := s.leaders[pid]
	s.mu.Unlock()
	if ok {
		return g, true
	}
	snap, err := s.rt.Snapshot(ctx, seam.WatchOptions{})
	if err != nil {
		return keptGroup{}, false
	}
	for _, g := range snap.Groups {
		if (g.LeaderPID == pid || g.PGID == pid) && g.StateDir != "" {
			return keptGroup{pgid: g.PGID, stateDir: g.StateDir}, true
		}
	}
	return keptGroup{}, false
}

// remember notes each group's leader and state directory from a snapshot,
// for Output.
func (s *backendSource) remember(snap sandbox.Snapshot) {
	leaders := make(map[int]keptGroup, len(snap.Groups))
	for _, g := range snap.Groups {
		if g.LeaderPID > 0 {
			leaders[g.LeaderPID] = keptGroup{pgid: g.PGID, stateDir: g.StateDir}
		}
	}
	s.mu.Lock()
	s.leaders = leaders
	s.mu.Unlock()
}

// Attach attaches through the seam's terminal handle; Close detaches it, so
// the program runs on and the runtime stops owning it.
func (s *backendSource) Attach(ctx context.Context, pid int) (ui.TerminalConn, error) {
	t, err := s.rt.AttachTerminal(ctx, pid)
	if err != nil {
		return nil, err
	}
	c := &terminalConn{t: t, out: t.Output()}
	if s.compat {
		c.out = io.MultiReader(strings.NewReader(noReplayTerminal), c.out)
	}
	return c, nil
}

type noticed struct {
	io.Reader
	io.Closer
}

// inputTimeout bounds one write of input or one resize of an attached
// terminal, so a dead connection turns into an error, not a hang.
const inputTimeout = 10 * time.Second

// terminalConn is an attached seam terminal in the TUI's terms.
type terminalConn struct {
	t   *seam.Terminal
	out io.Reader
}

// Read returns the terminal's output; after Close it reads io.EOF.
func (c *terminalConn) Read(p []byte) (int, error) {
	n, err := c.out.Read(p)
	if errors.Is(err, seam.ErrDetached) {
		err = io.EOF
	}
	return n, err
}

func (c *terminalConn) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), inputTimeout)
	defer cancel()
	if err := c.t.Write(ctx, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *terminalConn) Resize(rows, cols int) error {
	ctx, cancel := context.WithTimeout(context.Background(), inputTimeout)
	defer cancel()
	return c.t.Resize(ctx, rows, cols)
}

func (c *terminalConn) Close() error {
	c.t.Detach()
	return nil
}
