package ui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	"sandtop/groupstate"
	"sandtop/sandbox"
)

// fakeSource is a scripted Source for model tests. It records every call.
type fakeSource struct {
	mu        sync.Mutex
	info      SandboxInfo
	snaps     chan sandbox.Snapshot
	spawns    [][]string
	termSizes [][2]int // rows, cols of each SpawnTerminal
	signals   []string // "pgid:SIG" or "fg<pid>:SIG"
	teardowns []int
	nextPID   int
	outputs   map[int]string
	conns     map[int]*fakeConn
	// teardown, when set, scripts the progress of Teardown.
	teardown func(ctx context.Context, pgid int, progress func(TeardownEvent)) error
	// details are what GroupDetails answers, by state directory.
	details map[string]GroupDetails
}

// GroupDetails makes the fake a GroupDescriber.
func (f *fakeSource) GroupDetails(_ context.Context, stateDir string) (GroupDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.details[stateDir], nil
}

func newFakeSource() *fakeSource {
	return &fakeSource{
		info:    SandboxInfo{Name: "demo", Target: "unix:/run/sandtop.sock", Version: "0.1.0", Capabilities: []string{"groups", "signal-group", "replay"}},
		snaps:   make(chan sandbox.Snapshot, 16),
		nextPID: 9000,
		outputs: map[int]string{},
		conns:   map[int]*fakeConn{},
	}
}

func (f *fakeSource) Info(context.Context) (SandboxInfo, error) { return f.info, nil }

func (f *fakeSource) Watch(ctx context.Context) (<-chan sandbox.Snapshot, error) { return f.snaps, nil }

func (f *fakeSource) Spawn(_ context.Context, argv []string, _ string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spawns = append(f.spawns, argv)
	f.nextPID++
	return f.nextPID, nil
}

func (f *fakeSource) SpawnTerminal(_ context.Context, argv []string, rows, cols int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spawns = append(f.spawns, argv)
	f.termSizes = append(f.termSizes, [2]int{rows, cols})
	f.nextPID++
	return f.nextPID, nil
}

func (f *fakeSource) Attach(_ context.Context, pid int) (TerminalConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := newFakeConn()
	f.conns[pid] = c
	return c, nil
}

func (f *fakeSource) conn(pid int) *fakeConn {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns[pid]
}

func (f *fakeSource) Output(_ context.Context, pid int) (OutputStream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return ReaderStream(io.NopCloser(strings.NewReader(f.outputs[pid]))), nil
}

func (f *fakeSource) Signal(_ context.Context, pgid int, sig syscall.Signal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, fmt.Sprintf("%d:%s", pgid, signalName(sig)))
	return nil
}

func (f *fakeSource) SignalForeground(_ context.Context, pid int, sig syscall.Signal) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, fmt.Sprintf("fg%d:%s", pid, signalName(sig)))
	return pid + 1, nil
}

func (f *fakeSource) Teardown(ctx context.Context, pgid int, grace time.Duration, progress func(TeardownEvent)) error {
	f.mu.Lock()
	f.teardowns = append(f.teardowns, pgid)
	script := f.teardown
	f.mu.Unlock()
	if script != nil {
		return script(ctx, pgid, progress)
	}
	progress(TeardownEvent{PGID: pgid, Phase: TeardownTerm, Members: 1})
	progress(TeardownEvent{PGID: pgid, Phase: TeardownEmpty})
	return nil
}

func (f *fakeSource) calls() (spawns [][]string, signals []string, teardowns []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.spawns...), append([]string(nil), f.signals...), append([]int(nil), f.teardowns...)
}

// fakeConn is an attached terminal: output is fed by the test, input is
// recorded.
type fakeConn struct {
	pr      *io.PipeReader
	pw      *io.PipeWriter
	mu      sync.Mutex
	input   []byte
	resizes [][2]int
	closed  bool
}

func newFakeConn() *fakeConn {
	pr, pw := io.Pipe()
	return &fakeConn{pr: pr, pw: pw}
}

func (c *fakeConn) Read(p []byte) (int, error) { return c.pr.Read(p) }

func (c *fakeConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.input = append(c.input, p...)
	return len(p), nil
}

func (c *fakeConn) Resize(rows, cols int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resizes = append(c.resizes, [2]int{rows, cols})
	return nil
}

func (c *fakeConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.pw.Close()
}

func (c *fakeConn) typed() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.input)
}

func (c *fakeConn) lastResize() [2]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.resizes) == 0 {
		return [2]int{}
	}
	return c.resizes[len(c.resizes)-1]
}

// demoSnapshot is a small busy sandbox: our own groups, an agent's, a
// foreign one, a stopped one, one whose leader exited, and a terminal.
func demoSnapshot(now time.Time) sandbox.Snapshot {
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	proc := func(pid, pgid, sid int, state string, argv ...string) sandbox.Process {
		return sandbox.Process{PID: pid, PPID: 1, PGID: pgid, SID: sid, State: state, Argv: argv, Comm: argv[0], Started: ago(time.Duration(pid%97) * time.Minute), CPUPercent: float64(pid%13) / 2, RSSBytes: uint64(pid%50+3) << 20}
	}
	return sandbox.Snapshot{
		Taken: now,
		Groups: []sandbox.Group{
			{PGID: 4100, SID: 4100, LeaderPID: 4100, State: groupstate.Running, Origin: sandbox.OriginSandtop, Tag: "sandtop:build", Started: ago(12 * time.Minute),
				Members: []sandbox.Process{proc(4100, 4100, 4100, "S", "make", "-j4"), proc(4101, 4100, 4100, "R", "cc", "-c", "main.c"), proc(4102, 4100, 4100, "R", "cc", "-c", "util.c")}},
			{PGID: 4123, SID: 4100, LeaderPID: 4123, State: groupstate.Running, Origin: sandbox.OriginSandtop, Started: ago(3 * time.Minute),
				Members: []sandbox.Process{proc(4123, 4123, 4123, "S", "sleep", "600")}},
			{PGID: 4200, SID: 4200, LeaderPID: 4200, State: groupstate.Running, Origin: sandbox.OriginAgent, Tag: "dsh:agent-7", Started: ago(40 * time.Minute),
				StateDir: "/home/user/.dsh-e2b/processes/5f0c", ID: "5f0c",
				Members: []sandbox.Process{proc(4200, 4200, 4200, "S", "python3", "-m", "http.server", "8080")}},
			{PGID: 4300, SID: 4200, State: groupstate.LeaderExited, Origin: sandbox.OriginOther, Started: ago(2 * time.Hour),
				Members: []sandbox.Process{proc(4301, 4300, 4200, "S", "tail", "-f", "/var/log/app.log")}},
			{PGID: 4400, SID: 4400, LeaderPID: 4400, State: groupstate.Stopped, Origin: sandbox.OriginSandtop, Started: ago(30 * time.Second),
				Members: []sandbox.Process{proc(4400, 4400, 4400, "T", "vim", "notes.txt")}},
			{PGID: 4500, SID: 4500, LeaderPID: 4500, Origin: sandbox.OriginSandtop, Started: ago(5 * time.Minute), State: groupstate.Settled, Exit: &sandbox.Exit{Code: 2},
				Argv: []string{"sh", "-c", "go test ./..."}, StateDir: "/run/sandtop/groups/7a1e", ID: "7a1e", Supervisor: "shim"},
			{PGID: 4600, SID: 4600, LeaderPID: 4600, PTY: true, State: groupstate.Running, Origin: sandbox.OriginSandtop, Started: ago(9 * time.Minute),
				Members: []sandbox.Process{proc(4600, 4600, 4600, "S", "bash"), proc(4610, 4610, 4600, "S", "top")}},
		},
		Terminals: []sandbox.Terminal{
			{PID: 4600, SID: 4600, ForegroundPGID: 4610, InputWaiting: false, Rows: 40, Cols: 78, Title: "top", Argv: []string{"bash"}, Started: ago(9 * time.Minute)},
			{PID: 4700, SID: 4700, ForegroundPGID: 4700, InputWaiting: true, Rows: 24, Cols: 80, Argv: []string{"bash"}, Started: ago(time.Minute)},
		},
	}
}
