package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/testwait"
)

// In-process tests: the commands' run functions called in this process,
// with buffers for the streams, against a daemon running in this process
// too (backend/daemontest). No sandtop binary is involved. The factory is
// the binary's own (newFactory), so the target is found the way the
// binary finds it: from a --socket flag and a private config file. Only
// its Open differs: it dials through an invocation (below), which ends
// with the session as the binary's process would.

// inproc is one in-process daemon and a factory over it.
type inproc struct {
	env         *daemontest.Env
	g           *globalFlags
	f           *factory
	out, errOut *lockedBuffer
}

// newInproc starts a daemon and builds the factory the binary would for
// "--config <file with configText> --socket <the daemon's socket>".
func newInproc(t *testing.T, configText string) *inproc {
	t.Helper()
	env := daemontest.Start(t, daemon.Config{})
	cfgPath := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfgPath, []byte(configText), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &globalFlags{configPath: cfgPath}
	g.target.sockets = []string{env.Socket}
	p := &inproc{env: env, g: g, f: newFactory(g), out: &lockedBuffer{}, errOut: &lockedBuffer{}}
	p.f.Out, p.f.ErrOut = p.out, p.errOut
	p.f.Open = func(ctx context.Context, r resolved) (*connection, error) {
		if r.Endpoint != "unix:"+env.Socket {
			return nil, fmt.Errorf("resolved %s, not the test daemon's socket", r.Target)
		}
		v := &invocation{socket: env.Socket}
		return r.open(ctx, envd.WithHTTPClient(&http.Client{Transport: v}))
	}
	p.input(t, "")
	return p
}

// input gives the factory a new stdin that holds typed and stays open (a
// pipe: no terminal). Each attach needs its own, since the input goroutine
// of an attach that ended may still be reading the old one.
func (p *inproc) input(t *testing.T, typed string) {
	t.Helper()
	in, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); in.Close() })
	if _, err := w.WriteString(typed); err != nil {
		t.Fatal(err)
	}
	p.f.In = in
}

// reset empties the output buffers between commands.
func (p *inproc) reset() {
	p.out.Reset()
	p.errOut.Reset()
}

// testCtx bounds a test's commands: the machine may be loaded, but
// nothing here should take long.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// run starts argv detached, as "sandtop run [--tag tag] -- argv", and
// returns its pid and pgid.
func (p *inproc) run(t *testing.T, tag string, argv ...string) (pid, pgid int) {
	t.Helper()
	p.reset()
	if err := runRun(testCtx(t), p.f, runOptions{argv: argv, tag: tag}); err != nil {
		t.Fatalf("run %q: %v (stderr %q)", argv, err, p.errOut)
	}
	if _, err := fmt.Sscanf(p.out.String(), "pid %d pgid %d\n", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", p.out, err)
	}
	return pid, pgid
}

// list is "sandtop ls -o json", decoded.
func (p *inproc) list(t *testing.T) listDoc {
	t.Helper()
	p.reset()
	if err := runLs(testCtx(t), p.f, lsOptions{output: "json"}); err != nil {
		t.Fatalf("ls -o json: %v", err)
	}
	return decodeList(t, p.out.String())
}

// waitState waits until ls shows the group in state.
func (p *inproc) waitState(t *testing.T, pgid int, state string) listGroup {
	t.Helper()
	var g listGroup
	testwait.For(t, 20*time.Second, fmt.Sprintf("group %d to be %s", pgid, state), func() bool {
		var ok bool
		g, ok = findGroup(p.list(t), pgid)
		return ok && g.State == state
	})
	return g
}

// liveInGroup lists the processes of this machine in process group pgid
// that have not exited (zombies do not count), read from /proc: the
// daemon runs here, so its sandbox is this machine.
func liveInGroup(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			out = append(out, pid)
		}
	}
	return out
}

// invocation is the connections of one sandtop process. The binary's
// process ends soon after its command returns, and with it every connection
// and every goroutine the session left behind: a detached run's handle
// monitor, say, which in a live process removes the spill files of a group
// whose output it saw to the end. In-process, the session's Close is that
// end: envd's Client.Close reaches CloseIdleConnections here, which cuts
// every connection, live streams included, and refuses new ones.
type invocation struct {
	socket string
	once   sync.Once
	tr     *http.Transport

	mu    sync.Mutex
	conns []net.Conn
	ended bool
}

func (v *invocation) RoundTrip(r *http.Request) (*http.Response, error) {
	v.once.Do(func() {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true) // h2c, as envd.Dial speaks on a unix socket
		v.tr = &http.Transport{Protocols: &p, DialContext: v.dial}
	})
	return v.tr.RoundTrip(r)
}

func (v *invocation) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", v.socket)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended {
		c.Close()
		return nil, errors.New("this sandtop invocation has ended")
	}
	v.conns = append(v.conns, c)
	return c, nil
}

func (v *invocation) CloseIdleConnections() {
	v.mu.Lock()
	v.ended = true
	conns := v.conns
	v.conns = nil
	v.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// lockedBuffer is an output stream that commands may write from several
// goroutines (kill's teardowns, run --wait's two copies).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}
