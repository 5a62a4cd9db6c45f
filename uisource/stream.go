package uisource

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"sandtop/backend/seam"
	"sandtop/ui"
)

// Stock envd keeps no output for late subscribers: attaching there shows
// only what the program writes from now on. The pane says so first, in
// the stream itself, so the operator does not take a blank pane for a hang.
const (
	noReplayTerminal = "\x1b[90m[compat: stock envd keeps no replay; only new output appears below]\x1b[0m\r\n"
	noReplayOutput   = "[compat: stock envd keeps no replay; only new output appears below]\n"
)

// Output streams a group leader's output through the seam: the daemon's
// replay of recent output, then live bytes. Closing it only unsubscribes.
func (s *backendSource) Output(ctx context.Context, pid int) (io.ReadCloser, error) {
	r, err := s.rt.Output(ctx, pid)
	if err != nil {
		return nil, err
	}
	if s.compat {
		return &noticed{Reader: io.MultiReader(strings.NewReader(noReplayOutput), r), Closer: r}, nil
	}
	return r, nil
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
