package seam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// prompt is the PS1 every interactive test shell uses, so a prompt can be
// told from any other output.
const prompt = "st-ps1$ "

// shellSpec is an interactive bash with no profile, a known prompt and a
// dumb TERM, so its output is plain text.
func shellSpec(cwd string) TerminalSpec {
	return TerminalSpec{
		Argv:  []string{"/bin/bash", "--noprofile", "--norc", "-i"},
		Cwd:   cwd,
		Env:   map[string]string{"PS1": prompt, "TERM": "dumb", "HISTFILE": "/dev/null"},
		Rows:  24,
		Cols:  80,
		Grace: 300 * time.Millisecond,
	}
}

// collector keeps everything a Terminal's Output delivered.
type collector struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	err    error
	ended  bool
	change chan struct{}
}

func collect(t *testing.T, term *Terminal) *collector {
	c := &collector{change: make(chan struct{})}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := term.Output().Read(b)
			c.mu.Lock()
			c.buf.Write(b[:n])
			if err != nil {
				c.ended = true
				if err != io.EOF {
					c.err = err
				}
			}
			close(c.change)
			c.change = make(chan struct{})
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *collector) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// waitFor polls until the output after offset from matches re, and returns
// the offset just past the match.
func (c *collector) waitFor(t *testing.T, from int, re string, timeout time.Duration) int {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		out := c.buf.Bytes()[min(from, c.buf.Len()):]
		loc := rx.FindIndex(out)
		ended, change := c.ended, c.change
		c.mu.Unlock()
		if loc != nil {
			return from + loc[1]
		}
		if ended {
			t.Fatalf("output ended without %q; got %q", re, c.String()[min(from, len(c.String())):])
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("no %q within %s; got %q", re, timeout, c.String()[min(from, len(c.String())):])
		}
	}
}

func (c *collector) waitEnd(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		ended, change := c.ended, c.change
		c.mu.Unlock()
		if ended {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("output did not end within %s", timeout)
		}
	}
}

// exited reports whether term's top-level process has exited.
func exited(term *Terminal) bool {
	select {
	case <-term.Done():
		return true
	default:
		return false
	}
}

func write(t *testing.T, term *Terminal, s string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := term.Write(ctx, []byte(s)); err != nil {
		t.Fatalf("write %q: %v", s, err)
	}
}

var modes = []struct {
	name   string
	compat bool
}{{"extension", false}, {"compat", true}}

func TestTerminalInteractiveShell(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			env := newTerminalTestEnv(t, mode.compat)
			ctx := context.Background()
			term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
			if err != nil {
				t.Fatal(err)
			}
			defer term.Terminate(ctx)
			out := collect(t, term)

			// The first bytes are the requested shell's prompt: nothing of
			// the bootstrap, not even the boundary.
			at := out.waitFor(t, 0, regexp.QuoteMeta(prompt), 10*time.Second)
			if got := out.String(); !strings.HasPrefix(got, prompt) {
				t.Fatalf("output does not start with the prompt: %q", got)
			}
			if s := out.String(); strings.Contains(s, "sandtop-boundary") || strings.Contains(s, "runner.bash") {
				t.Fatalf("bootstrap bytes leaked: %q", s)
			}

			write(t, term, "echo hi\r")
			at = out.waitFor(t, at, `\r\nhi\r\n`+regexp.QuoteMeta(prompt), 10*time.Second)

			write(t, term, "stty size\r")
			at = out.waitFor(t, at, `\r\n24 80\r\n`+regexp.QuoteMeta(prompt), 10*time.Second)
			if err := term.Resize(ctx, 30, 100); err != nil {
				t.Fatal(err)
			}
			write(t, term, "stty size\r")
			at = out.waitFor(t, at, `\r\n30 100\r\n`+regexp.QuoteMeta(prompt), 10*time.Second)

			// read x: the shell's own group waits on the terminal. Readline
			// also waits on it, so first see read's own prompt (expanded,
			// so the echoed command line can't match): a byte typed before
			// bash leaves readline's raw mode would be lost to read.
			write(t, term, "read -p \"st-$((6*7))> \" x\r")
			at = out.waitFor(t, at, `st-42> `, 10*time.Second)
			testwait.NoError(t, 10*time.Second, func() error {
				fg, err := term.InspectForeground(ctx)
				if err != nil {
					return err
				}
				if fg == nil || fg.Pgid != term.Pid() {
					return fmt.Errorf("foreground %+v, want the shell's group %d", fg, term.Pid())
				}
				if fg.InputWaiting != !mode.compat {
					return fmt.Errorf("inputWaiting %v during read", fg.InputWaiting)
				}
				return nil
			})
			write(t, term, "\r")
			at = out.waitFor(t, at, regexp.QuoteMeta(prompt), 10*time.Second)

			// sleep: its own group is in the foreground and not reading.
			write(t, term, "sleep 5\r")
			var sleepPgid int
			testwait.NoError(t, 10*time.Second, func() error {
				fg, err := term.InspectForeground(ctx)
				if err != nil {
					return err
				}
				if fg == nil || fg.Pgid == term.Pid() {
					return fmt.Errorf("foreground %+v, want sleep's group", fg)
				}
				if fg.InputWaiting {
					return errors.New("inputWaiting true under sleep")
				}
				sleepPgid = fg.Pgid
				return nil
			})
			got, err := term.SignalForeground(ctx, syscall.SIGINT)
			if err != nil || got != sleepPgid {
				t.Fatalf("SIGINT went to %d (%v), want sleep's group %d", got, err, sleepPgid)
			}
			at = out.waitFor(t, at, regexp.QuoteMeta(prompt), 10*time.Second)

			// SIGINT interrupts sleep 100 and leaves the shell alive.
			write(t, term, "sleep 100\r")
			testwait.NoError(t, 10*time.Second, func() error {
				fg, err := term.InspectForeground(ctx)
				if err != nil || fg == nil || fg.Pgid == term.Pid() {
					return fmt.Errorf("foreground %+v, %v", fg, err)
				}
				return nil
			})
			start := time.Now()
			if _, err := term.SignalForeground(ctx, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			at = out.waitFor(t, at, regexp.QuoteMeta(prompt), 10*time.Second)
			if time.Since(start) > 5*time.Second {
				t.Fatal("sleep 100 was not interrupted")
			}
			write(t, term, "echo alive\r")
			at = out.waitFor(t, at, `\r\nalive\r\n`, 10*time.Second)

			// The shell's own group cannot be SIGKILLed through the foreground.
			testwait.NoError(t, 10*time.Second, func() error {
				fg, err := term.InspectForeground(ctx)
				if err != nil || fg == nil || fg.Pgid != term.Pid() {
					return fmt.Errorf("foreground %+v, %v", fg, err)
				}
				return nil
			})
			if _, err := term.SignalForeground(ctx, syscall.SIGKILL); err == nil ||
				err.Error() != "refusing to SIGKILL the terminal shell; terminate the terminal session instead" {
				t.Fatalf("SIGKILL to the shell: %v", err)
			}

			// A background job that ignores TERM (and HUP) still goes.
			write(t, term, "(trap '' TERM HUP; exec sleep 1000) &\r")
			testwait.NoError(t, 10*time.Second, func() error {
				groups, err := env.rt.control.SessionGroups(ctx, term.Pid())
				if err != nil || len(groups) < 2 {
					return fmt.Errorf("session groups %v, %v", groups, err)
				}
				return nil
			})
			if err := term.Terminate(ctx); err != nil {
				t.Fatal(err)
			}
			if groups, err := env.rt.control.SessionGroups(ctx, term.Pid()); err != nil || len(groups) != 0 {
				t.Fatalf("after Terminate the session still has %v (%v)", groups, err)
			}
			select {
			case <-term.Done():
			default:
				t.Fatal("Terminate returned before the shell exited")
			}
			out.waitEnd(t, 10*time.Second)
			if err := term.Terminate(ctx); err != nil {
				t.Fatalf("second Terminate: %v", err)
			}
			if err := term.Write(ctx, []byte("x")); err == nil || err.Error() != "terminal process has exited" {
				t.Fatalf("write after Terminate: %v", err)
			}
			if o, err := term.Outcome(); err != nil || o.Signal == "" {
				t.Fatalf("outcome %v, %v; want a signal", o, err)
			}
		})
	}
}

func TestTerminalOutputEndsAndRejectsAfterExit(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			env := newTerminalTestEnv(t, mode.compat)
			ctx := context.Background()
			// π is CF 80: the two bytes leave the PTY in separate writes.
			spec := TerminalSpec{
				Argv: []string{"/bin/bash", "--noprofile", "--norc", "-c",
					`printf '\317'; sleep 0.1; printf '\200 done'; exit 7`},
				Cwd: env.cwd, Rows: 24, Cols: 80, Grace: 200 * time.Millisecond,
			}
			term, err := env.rt.SpawnTerminal(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			out := collect(t, term)
			out.waitEnd(t, 10*time.Second)
			if got := out.String(); got != "π done" {
				t.Fatalf("output %q, want %q", got, "π done")
			}
			<-term.Done()
			o, err := term.Outcome()
			if err != nil || o.ExitCode == nil || *o.ExitCode != 7 {
				t.Fatalf("outcome %v, %v; want exit code 7", o, err)
			}
			if err := term.Write(ctx, []byte("x")); err == nil || err.Error() != "terminal process has exited" {
				t.Fatalf("write after exit: %v", err)
			}
			if err := term.Resize(ctx, 10, 10); err == nil || err.Error() != "terminal process has exited" {
				t.Fatalf("resize after exit: %v", err)
			}
			if fg, err := term.InspectForeground(ctx); fg != nil || err != nil {
				t.Fatalf("foreground after exit: %+v, %v", fg, err)
			}
			if _, err := term.SignalForeground(ctx, syscall.SIGINT); err == nil || !strings.Contains(err.Error(), "cannot resolve foreground") {
				t.Fatalf("signal after exit: %v", err)
			}
			if err := term.Terminate(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTerminalUnrequestedExitKeepsItsCode(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	for _, code := range []int{0, 143, 255} {
		spec := TerminalSpec{Argv: []string{"/bin/bash", "-c", fmt.Sprintf("exit %d", code)},
			Cwd: env.cwd, Rows: 5, Cols: 5, Grace: 100 * time.Millisecond}
		term, err := env.rt.SpawnTerminal(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		<-term.Done()
		o, err := term.Outcome()
		if err != nil || o.ExitCode == nil || *o.ExitCode != code || o.Signal != "" {
			t.Fatalf("exit %d gave %v, %v", code, o, err)
		}
		if err := term.Terminate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerminalAttachAfterRestart(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			env := newTerminalTestEnv(t, mode.compat)
			ctx := context.Background()
			first, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
			if err != nil {
				t.Fatal(err)
			}
			defer first.Terminate(ctx)
			out1 := collect(t, first)
			at := out1.waitFor(t, 0, regexp.QuoteMeta(prompt), 10*time.Second)
			write(t, first, "echo before\r")
			out1.waitFor(t, at, `\r\nbefore\r\n`, 10*time.Second)

			// A new client (as after a restart of sandtop) finds it again.
			rt2 := env.newClient(t)
			infos, err := rt2.listTerminals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var found *TerminalInfo
			for i := range infos {
				if infos[i].Pid == first.Pid() {
					found = &infos[i]
				}
			}
			if found == nil || found.ID != first.ID() || found.Grace != 300*time.Millisecond {
				t.Fatalf("terminal %d (%s) not listed: %+v", first.Pid(), first.ID(), infos)
			}
			if len(found.Argv) == 0 || found.Argv[0] != "/bin/bash" || found.Argv[len(found.Argv)-1] != "-i" {
				t.Fatalf("listed argv %q", found.Argv)
			}
			if !mode.compat && (found.Rows != 24 || found.Cols != 80) {
				t.Fatalf("listed size %dx%d", found.Rows, found.Cols)
			}
			if _, err := rt2.AttachTerminal(ctx, 999999); err == nil || !errors.Is(err, ErrNotFound) {
				t.Fatalf("attach to a stranger: %v", err)
			}

			term, err := rt2.AttachTerminal(ctx, first.Pid())
			if err != nil {
				t.Fatal(err)
			}
			out := collect(t, term)
			// The replay shows what came before, without the boundary.
			at = out.waitFor(t, 0, `\r\nbefore\r\n`+regexp.QuoteMeta(prompt), 10*time.Second)
			if s := out.String(); !strings.HasPrefix(s, prompt) {
				t.Fatalf("replay does not start at the first prompt: %q", s)
			}
			write(t, term, "echo after\r")
			at = out.waitFor(t, at, `\r\nafter\r\n`, 10*time.Second)
			if err := term.Resize(ctx, 40, 120); err != nil {
				t.Fatal(err)
			}
			write(t, term, "stty size\r")
			out.waitFor(t, at, `\r\n40 120\r\n`, 10*time.Second)
			if err := term.Terminate(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case <-first.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the first handle did not see the session end")
			}
			if infos, _ := rt2.listTerminals(ctx); len(infos) != 0 {
				t.Fatalf("still listed after Terminate: %+v", infos)
			}
		})
	}
}

func TestTerminalTerminateRejectsAndJoinsOperations(t *testing.T) {
	t.Parallel()
	env := newTerminalTestEnv(t, false)
	ctx := context.Background()
	term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, term)
	out.waitFor(t, 0, regexp.QuoteMeta(prompt), 10*time.Second)

	// Calls racing Terminate either finish first or are cancelled; none is
	// still running when Terminate returns.
	var wg sync.WaitGroup
	var inFlight sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		inFlight.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for {
				_, err := term.InspectForeground(ctx)
				if first {
					inFlight.Done()
					first = false
				}
				if err != nil || exited(term) {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	inFlight.Wait()
	// An interactive bash ignores SIGTERM, so the session lives for the
	// whole grace: a window in which new calls must be refused.
	done := make(chan error, 1)
	go func() { done <- term.Terminate(ctx) }()
	testwait.NoError(t, 10*time.Second, func() error {
		// An empty Write starts no call to the daemon: it only asks whether
		// the terminal still takes calls.
		if term.Write(ctx, nil) == nil {
			return errors.New("Terminate has not started")
		}
		return nil
	})
	if !exited(term) {
		for _, call := range []func() error{
			func() error { return term.Write(ctx, []byte("x")) },
			func() error { return term.Resize(ctx, 10, 10) },
			func() error { _, err := term.InspectForeground(ctx); return err },
			func() error { _, err := term.SignalForeground(ctx, syscall.SIGINT); return err },
		} {
			if err := call(); err == nil || (err.Error() != "terminal is terminating" && !exited(term)) {
				t.Fatalf("call during Terminate: %v", err)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if o, err := term.Outcome(); err != nil || o.Signal != "SIGKILL" {
		t.Fatalf("outcome %v, %v; want SIGKILL (bash ignores TERM)", o, err)
	}
}

// Detach lets a terminal run on: the handle's stream ends with
// ErrDetached, the runtime stops owning it (so its release never ends the
// session), and it can be attached again and ended from there.
func TestTerminalDetachLeavesItRunning(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			env := newTerminalTestEnv(t, mode.compat)
			ctx := context.Background()
			term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
			if err != nil {
				t.Fatal(err)
			}
			out := collect(t, term)
			out.waitFor(t, 0, regexp.QuoteMeta(prompt), 10*time.Second)
			if n := env.rt.ownedTerminals(); n != 1 {
				t.Fatalf("owned terminals = %d, want 1", n)
			}
			term.Detach()
			select {
			case <-term.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("Done did not close after Detach")
			}
			if _, err := term.Outcome(); !errors.Is(err, ErrDetached) {
				t.Fatalf("outcome error %v, want ErrDetached", err)
			}
			if err := term.Write(ctx, []byte("exit\r")); !errors.Is(err, ErrDetached) {
				t.Fatalf("Write after Detach: %v", err)
			}
			testwait.For(t, 10*time.Second, "the runtime to let go of the detached terminal", func() bool { return env.rt.ownedTerminals() == 0 })
			// Had the release run, it would have ended the session by now.
			time.Sleep(300 * time.Millisecond)
			again, err := env.rt.AttachTerminal(ctx, term.Pid())
			if err != nil {
				t.Fatalf("attach after Detach: %v", err)
			}
			out2 := collect(t, again)
			write(t, again, "echo still-here\r")
			out2.waitFor(t, 0, `\r\nstill-here\r\n`, 10*time.Second)
			if err := again.Terminate(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
