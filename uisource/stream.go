package uisource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/seam"
	"sandtop/outlog"
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
// A finished group (pid is then its pgid, or the leader the table named)
// is read back from whatever its state directory kept, marked or not, and
// else from the daemon's replay while the daemon still holds it.
// Closing it only unsubscribes.
func (s *backendSource) Output(ctx context.Context, pid int) (ui.OutputStream, error) {
	g, known := s.groupOf(ctx, pid)
	if known && g.stateDir != "" {
		rd := s.rt.OutputLog(g.stateDir)
		if err := rd.Probe(ctx); err == nil && (rd.Marked() || g.settled && rd.Found()) {
			size := s.keptSize(ctx, g.stateDir)
			if size <= keptBudget {
				return s.keptOutput(ctx, pid, g, rd), nil
			}
			if g.settled {
				return nil, fmt.Errorf("group %d kept %d MiB of output, more than the pane reads back", g.pgid, size>>20)
			}
		}
	}
	if known && g.settled && s.compat {
		return nothingKept(), nil // stock envd forgets an ended process's output
	}
	r, err := s.rt.Output(ctx, pid)
	if err != nil {
		if known && g.settled && connect.CodeOf(err) == connect.CodeNotFound {
			return nothingKept(), nil // the daemon's retention is over
		}
		return nil, err
	}
	if s.compat {
		return ui.ReaderStream(&noticed{Reader: io.MultiReader(strings.NewReader(noReplayOutput), r), Closer: r}), nil
	}
	return ui.ReaderStream(r), nil
}

// nothingKept is the output of a finished group that left none behind:
// the pane then says so.
func nothingKept() ui.OutputStream { return ui.ReaderStream(io.NopCloser(strings.NewReader(""))) }

// keptOutput follows what g kept. A finished group's is read to its end
// and no further: there is no live stream left to fall back on.
func (s *backendSource) keptOutput(ctx context.Context, pid int, g keptGroup, rd *outlog.Reader) ui.OutputStream {
	if g.settled {
		return newKeptStream(ctx, nil, g.pgid, rd, 0, nil)
	}
	poll := keptPoll
	if s.compat {
		poll = keptPollCompat
	}
	// The live stream carries on where the kept output stops (a full
	// spill); without it the kept output is all there is.
	live, _ := s.rt.Output(ctx, pid)
	return newKeptStream(ctx, s.rt, g.pgid, rd, poll, live)
}

// keptFits says whether the output kept in stateDir is small enough to
// read back from its start (keptBudget).
func (s *backendSource) keptFits(ctx context.Context, stateDir string) bool {
	return s.keptSize(ctx, stateDir) <= keptBudget
}

// keptSize is how many bytes of output stateDir's spills hold.
func (s *backendSource) keptSize(ctx context.Context, stateDir string) int64 {
	var total int64
	for _, name := range []string{wrapper.StdoutSpillFile, wrapper.StderrSpillFile} {
		_, size, err := s.rt.ReadStateFile(ctx, stateDir, name, 0, 1)
		if err == nil {
			total += size
		}
	}
	return total
}

// keptGroup is what Output needs to know of a group to read what it kept.
type keptGroup struct {
	pgid     int
	stateDir string
	settled  bool // no live member: what it kept is all there will be
}

// groupOf finds the group Output is asked for: in the last snapshot a
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
	for _, g := range snap.Groups { // the live ones come first
		if (g.LeaderPID == pid || g.PGID == pid) && g.StateDir != "" {
			return keptGroup{pgid: g.PGID, stateDir: g.StateDir, settled: !g.Live()}, true
		}
	}
	return keptGroup{}, false
}

// remember notes, from a snapshot, each live group by its leader's pid and
// each finished group that published a state directory by its pgid (and
// its leader's pid, where the table still names one), for Output. A live
// group wins a pid both claim: a finished group's pgid may have been
// reused since.
func (s *backendSource) remember(snap sandbox.Snapshot) {
	leaders := make(map[int]keptGroup, len(snap.Groups))
	for _, g := range snap.Groups {
		if !g.Live() && g.StateDir != "" {
			k := keptGroup{pgid: g.PGID, stateDir: g.StateDir, settled: true}
			leaders[g.PGID] = k
			if g.LeaderPID > 0 {
				leaders[g.LeaderPID] = k
			}
		}
	}
	for _, g := range snap.Groups {
		if g.Live() && g.LeaderPID > 0 {
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
