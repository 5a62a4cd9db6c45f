package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/term"
)

// attachable is the part of a remote terminal that a full-screen attach
// needs (seam.Terminal has it).
type attachable interface {
	Output() io.Reader
	Write(ctx context.Context, data []byte) error
	Resize(ctx context.Context, rows, cols int) error
	Done() <-chan struct{}
}

// attachEnd says why an attach ended.
type attachEnd int

const (
	endDetached attachEnd = iota // the operator pressed the detach key
	endExited                    // the remote program exited
	endInputEOF                  // our stdin closed (not a terminal)
)

// attachLoop hands the operator's terminal to the remote one until the
// detach key, the program's exit, or ctx. Every other byte, Ctrl-C
// included, goes to the remote program. On a real terminal it switches to
// raw mode and forwards window size changes.
func attachLoop(ctx context.Context, t attachable, in *os.File, out io.Writer, detach byte, detachName string, pid int) (attachEnd, error) {
	fd := int(in.Fd())
	isTTY := term.IsTerminal(fd)
	fmt.Fprintf(out, "[sandtop] attached to terminal %d; detach with %s (Ctrl-C goes to the program)\r\n", pid, detachName)
	if isTTY {
		old, err := term.MakeRaw(fd)
		if err != nil {
			return endDetached, fmt.Errorf("put the terminal in raw mode: %w", err)
		}
		defer term.Restore(fd, old)
		resize := func() {
			if cols, rows, err := term.GetSize(fd); err == nil && rows > 0 && cols > 0 {
				_ = t.Resize(ctx, rows, cols)
			}
		}
		resize()
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for {
				select {
				case <-winch:
					resize()
				case <-ctx.Done():
					return
				}
			}
		}()
	}

	// Output that arrives after the attach ends (the detach key, ctx) is
	// not shown: it would land after the closing message, on a terminal
	// back in cooked mode.
	shown := &gatedWriter{w: out}
	defer shown.close()
	outputDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(shown, t.Output())
		outputDone <- err
	}()
	inputEnd := make(chan error, 1)
	go func() { inputEnd <- forwardInput(ctx, in, t, detach) }()

	select {
	case err := <-inputEnd:
		if errors.Is(err, errDetach) {
			return endDetached, nil
		}
		if err == nil || errors.Is(err, io.EOF) {
			// Without a terminal, stdin ending is not a detach request:
			// keep showing output until the program ends or ctx does.
			select {
			case <-t.Done():
				<-outputDone
				return endExited, nil
			case <-ctx.Done():
				return endInputEOF, nil
			}
		}
		return endDetached, err
	case <-t.Done():
		<-outputDone
		return endExited, nil
	case <-ctx.Done():
		return endDetached, nil
	}
}

var errDetach = errors.New("detach")

// gatedWriter passes writes to w until closed, and fails them after.
type gatedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

var errAttachEnded = errors.New("attach ended")

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, errAttachEnded
	}
	return g.w.Write(p)
}

func (g *gatedWriter) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// forwardInput copies stdin to the remote terminal, stopping at the detach
// byte (what precedes it in the same read still goes through).
func forwardInput(ctx context.Context, in io.Reader, t attachable, detach byte) error {
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			i := bytes.IndexByte(chunk, detach)
			if i >= 0 {
				chunk = chunk[:i]
			}
			if len(chunk) > 0 {
				if werr := t.Write(ctx, append([]byte(nil), chunk...)); werr != nil {
					return fmt.Errorf("send input: %w", werr)
				}
			}
			if i >= 0 {
				return errDetach
			}
		}
		if err != nil {
			return err
		}
	}
}

// parseDetachKey turns "ctrl+]" (Bubble Tea's key names, as in the config's
// [keys] detach) into the byte a raw terminal sends for it.
func parseDetachKey(name string) (byte, error) {
	k, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(name)), "ctrl+")
	if !ok || len(k) != 1 {
		return 0, fmt.Errorf("detach key %q: use a ctrl+<key> chord such as ctrl+] or ctrl+g", name)
	}
	c := k[0]
	switch {
	case c >= 'a' && c <= 'z':
		c -= 'a' - 'A'
	case c == '@' || (c >= '[' && c <= '_'):
	default:
		return 0, fmt.Errorf("detach key %q has no control code; use ctrl+a..z, ctrl+[, ctrl+\\, ctrl+], ctrl+^ or ctrl+_", name)
	}
	b := c & 0x1f
	switch b {
	case 0x03, 0x09, 0x0a, 0x0d, 0x1b: // Ctrl-C, Tab, LF, Enter, Esc
		return 0, fmt.Errorf("detach key %q is a key programs need (Ctrl-C, Tab, Enter or Esc); pick another, e.g. ctrl+]", name)
	}
	return b, nil
}
