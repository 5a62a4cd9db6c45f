package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// BackendOptions configure the Source over a sandtop backend.
type BackendOptions struct {
	// Name and Target label the sandbox in the header.
	Name, Target string
	// Cwd is where :run and :term start programs; empty means "/".
	Cwd string
	// Grace is the TERM→KILL grace recorded with spawned processes;
	// zero means 5 s.
	Grace time.Duration
	// Interval is the most often the process table is refreshed; zero
	// means one second.
	Interval time.Duration
}

// backendSource is the real Source: the seam Runtime for spawning and
// teardown (the same code paths as the CLI), and the daemon's Supervisor
// and Process services for the live table, attach and output. It never
// disposes the Runtime: quitting the TUI leaves every process running.
type backendSource struct {
	c    *envd.Client
	rt   *backend.Runtime
	opts BackendOptions
}

// NewBackendSource adapts a connected sandbox to the TUI. Main wires it as
//
//	ui.NewBackendSource(s.Client, s.Runtime, ui.BackendOptions{Name: s.Target.Name, Target: s.Target.Endpoint})
func NewBackendSource(c *envd.Client, rt *backend.Runtime, opts BackendOptions) (Source, error) {
	if c == nil || rt == nil {
		return nil, errors.New("ui: backend source needs a client and a runtime")
	}
	if opts.Cwd == "" {
		opts.Cwd = "/"
	}
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.Target == "" {
		opts.Target = c.Target
	}
	return &backendSource{c: c, rt: rt, opts: opts}, nil
}

func (s *backendSource) Info(ctx context.Context) (SandboxInfo, error) {
	info := SandboxInfo{Name: s.opts.Name, Target: s.opts.Target}
	h, err := s.c.Hello(ctx)
	if envd.IsUnimplemented(err) {
		info.Version = "envd (no sandtop extension)"
		return info, nil
	}
	if err != nil {
		return info, err
	}
	info.Version, info.Capabilities, info.Hostname = h.GetVersion(), h.GetCapabilities(), h.GetHostname()
	if info.Name == "" {
		info.Name = h.GetHostname()
	}
	return info, nil
}

// Watch follows the daemon's WatchGroups stream and adds the terminals and
// which groups sandtop manages to each snapshot.
func (s *backendSource) Watch(ctx context.Context) (<-chan Snapshot, error) {
	stream, err := s.c.Supervisor.WatchGroups(ctx, connect.NewRequest(&sandtopv1.WatchGroupsRequest{IntervalMs: uint32(s.opts.Interval / time.Millisecond)}))
	if err != nil {
		return nil, err
	}
	msgs := make(chan *sandtopv1.WatchGroupsResponse)
	go func() {
		defer close(msgs)
		defer stream.Close()
		for stream.Receive() {
			select {
			case msgs <- stream.Msg():
			case <-ctx.Done():
				return
			}
		}
	}()
	out := make(chan Snapshot, 1)
	go func() {
		defer close(out)
		// The group stream only speaks when groups change; terminals (size,
		// foreground, input waiting) are re-read on a slower tick.
		tick := time.NewTicker(2 * s.opts.Interval)
		defer tick.Stop()
		var last *sandtopv1.WatchGroupsResponse
		for {
			select {
			case msg, ok := <-msgs:
				if !ok {
					return
				}
				last = msg
			case <-tick.C:
				if last == nil {
					continue
				}
			case <-ctx.Done():
				return
			}
			snap := s.snapshot(ctx, last.GetGroups(), last.GetTakenUnixMs())
			select { // keep only the newest snapshot if the UI is behind
			case <-out:
			default:
			}
			select {
			case out <- snap:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (s *backendSource) snapshot(ctx context.Context, groups []*sandtopv1.Group, takenMs int64) Snapshot {
	snap := Snapshot{Taken: time.UnixMilli(takenMs)}
	// The wrapper's outer half (started by the daemon, carries the output)
	// is plumbing: fold it into the user's group it leads to.
	outerPid := map[string]int{}
	hidden := map[int]bool{}
	for _, g := range groups {
		if dir, ok := wrapperOuter(leaderArgv(g)); ok && g.GetStartedPid() != 0 {
			outerPid[dir] = int(g.GetStartedPid())
			hidden[int(g.GetPgid())] = true
		}
	}
	root := s.rt.RuntimeRoot()
	for _, g := range groups {
		out := convertGroup(g)
		if dir, argv, ok := wrapperInner(leaderArgv(g)); ok {
			out.Argv = argv
			out.Origin = OriginAgent
			if root != "" && strings.HasPrefix(dir, root+"/") {
				out.Origin = OriginSandtop
			}
			if pid := outerPid[dir]; pid != 0 {
				out.LeaderPID = pid
			}
		}
		snap.Groups = append(snap.Groups, out)
	}
	kept := snap.Groups[:0]
	for _, g := range snap.Groups {
		if !hidden[g.PGID] {
			kept = append(kept, g)
		}
	}
	snap.Groups = kept
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if res, err := s.c.Supervisor.ListTerminals(tctx, connect.NewRequest(&sandtopv1.ListTerminalsRequest{})); err == nil {
		for _, t := range res.Msg.GetTerminals() {
			snap.Terminals = append(snap.Terminals, Terminal{
				PID: int(t.GetPid()), SID: int(t.GetSid()), ForegroundPGID: int(t.GetForegroundPgid()),
				InputWaiting: t.GetInputWaiting(), Rows: int(t.GetRows()), Cols: int(t.GetCols()),
				Argv: t.GetArgv(), Tag: t.GetTag(), Started: time.UnixMilli(t.GetStartTimeUnixMs()),
				Title: terminalTitle(t, groups),
			})
		}
	}
	return snap
}

// terminalTitle names a terminal by what runs in its foreground.
func terminalTitle(t *sandtopv1.Terminal, groups []*sandtopv1.Group) string {
	for _, g := range groups {
		if g.GetPgid() != t.GetForegroundPgid() {
			continue
		}
		for _, p := range g.GetMembers() {
			if p.GetPid() == g.GetPgid() {
				return argvString(p.GetArgv(), p.GetComm())
			}
		}
	}
	return ""
}

// wrapperInner recognises the inner half of sandtop's wrapper (the leader
// of the user's group): its argv is bash … "sandtop-wrapper" STATEDIR … --
// ARGV. It returns the state dir and the user's argv.
func wrapperInner(argv []string) (stateDir string, user []string, ok bool) {
	for i, a := range argv {
		if a == "sandtop-wrapper" && i+1 < len(argv) {
			for j := i + 1; j < len(argv); j++ {
				if argv[j] == "--" {
					return argv[i+1], argv[j+1:], true
				}
			}
		}
	}
	return "", nil, false
}

// wrapperOuter recognises the outer half (the process the daemon started):
// its script starts with state='STATEDIR'.
func wrapperOuter(argv []string) (stateDir string, ok bool) {
	for _, a := range argv {
		if rest, found := strings.CutPrefix(a, "state='"); found {
			// Only process wrappers; a terminal's runner is the terminal.
			if end := strings.IndexByte(rest, '\''); end > 0 && strings.Contains(rest[:end], "/processes/") {
				return rest[:end], true
			}
		}
	}
	return "", false
}

func leaderArgv(g *sandtopv1.Group) []string {
	for _, p := range g.GetMembers() {
		if p.GetPid() == g.GetPgid() {
			return p.GetArgv()
		}
	}
	return nil
}

// convertGroup maps the wire group; sandtop's own terminals carry a
// "sandtop" tag.
func convertGroup(g *sandtopv1.Group) Group {
	out := Group{PGID: int(g.GetPgid()), SID: int(g.GetSid()), LeaderPID: int(g.GetStartedPid()), Tag: g.GetTag(), PTY: g.GetPty()}
	if strings.HasPrefix(out.Tag, "sandtop") {
		out.Origin = OriginSandtop
	}
	for _, p := range g.GetMembers() {
		out.Members = append(out.Members, Process{
			PID: int(p.GetPid()), PPID: int(p.GetPpid()), PGID: int(p.GetPgid()), SID: int(p.GetSid()),
			State: p.GetState(), Argv: p.GetArgv(), Comm: p.GetComm(), TTY: p.GetTty(),
			Started: time.UnixMilli(p.GetStartTimeUnixMs()), CPUPercent: p.GetCpuPercent(), RSSBytes: p.GetRssBytes(),
		})
	}
	out.Started = groupStarted(&out)
	return out
}

// Spawn starts argv through the seam (and so through the wrapper), with
// output collected in the sandbox, and lets go of the handle: the process
// outlives the TUI.
func (s *backendSource) Spawn(ctx context.Context, argv []string, cwd string) (int, error) {
	if cwd == "" {
		cwd = s.opts.Cwd
	}
	h, err := s.rt.Spawn(ctx, backend.SpawnSpec{
		Argv: argv, Cwd: cwd, GraceMs: float64(s.opts.Grace / time.Millisecond),
		Stdio: backend.Stdio{Stdin: backend.StdinIgnore(), Stdout: backend.OutputCollect(64 << 10), Stderr: backend.OutputCollect(64 << 10)},
	})
	if err != nil {
		return 0, err
	}
	return h.Pgid(), nil
}

func (s *backendSource) SpawnTerminal(ctx context.Context, argv []string, rows, cols int) (int, error) {
	t, err := s.rt.SpawnTerminal(ctx, backend.TerminalSpec{
		Argv: argv, Cwd: s.opts.Cwd, Env: map[string]string{"TERM": "xterm-256color"},
		Rows: rows, Cols: cols, GraceMs: int(s.opts.Grace / time.Millisecond),
	})
	if err != nil {
		return 0, err
	}
	return t.Pid(), nil
}

func (s *backendSource) Signal(ctx context.Context, pgid int, sig syscall.Signal) error {
	delivered, err := s.rt.Control().SignalGroup(ctx, pgid, sig)
	if err == nil && !delivered {
		return fmt.Errorf("pgid %d has no members left", pgid)
	}
	return err
}

func (s *backendSource) SignalForeground(ctx context.Context, termPid int, sig syscall.Signal) (int, error) {
	pgid, _, ok, err := s.rt.Control().ForegroundGroup(ctx, termPid)
	if err != nil {
		return 0, err
	}
	if !ok || pgid <= 1 {
		return 0, fmt.Errorf("terminal %d has no foreground group", termPid)
	}
	return pgid, s.Signal(ctx, pgid, sig)
}

func (s *backendSource) Teardown(ctx context.Context, pgid int, grace time.Duration, progress func(TeardownEvent)) error {
	return s.rt.TeardownGroup(ctx, pgid, grace, func(ev backend.TeardownEvent) {
		out := TeardownEvent{PGID: ev.Pgid, Err: ev.Err}
		switch ev.Phase {
		case backend.PhaseTermSent:
			out.Phase = TeardownTerm
		case backend.PhaseWaiting:
			out.Phase, out.Remaining = TeardownWaiting, time.Until(ev.Deadline)
		case backend.PhaseKillSent:
			out.Phase = TeardownKill
		case backend.PhaseEmpty:
			out.Phase = TeardownEmpty
		default:
			out.Phase = TeardownFailed
		}
		progress(out)
	})
}

// Output streams a process's output through Process.Connect: the daemon's
// replay of recent output, then live bytes. Closing it only unsubscribes.
func (s *backendSource) Output(ctx context.Context, pid int) (io.ReadCloser, error) {
	r, err := s.connect(ctx, pid)
	if err != nil {
		return nil, err
	}
	r.skipMarker = true
	return r, nil
}

// Attach is Output plus input and resize, all over the Process service, so
// detaching is just closing the subscription.
func (s *backendSource) Attach(ctx context.Context, pid int) (TerminalConn, error) {
	r, err := s.connect(ctx, pid)
	if err != nil {
		return nil, err
	}
	return &processConn{streamReader: r, proc: s.c, pid: pid}, nil
}

func (s *backendSource) connect(ctx context.Context, pid int) (*streamReader, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := s.c.Process.Connect(ctx, connect.NewRequest(&process.ConnectRequest{Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(pid)}}}))
	if err != nil {
		cancel()
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer stream.Close()
		for stream.Receive() {
			ev := stream.Msg().GetEvent()
			if d := ev.GetData(); d != nil {
				chunk := d.GetPty()
				if chunk == nil {
					chunk = append(d.GetStdout(), d.GetStderr()...)
				}
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			if ev.GetEnd() != nil {
				break
			}
		}
		err := stream.Err()
		if ctx.Err() != nil || err == nil {
			pw.Close()
			return
		}
		pw.CloseWithError(err)
	}()
	return &streamReader{r: pr, cancel: cancel}, nil
}

// streamReader is one Connect subscription as a reader.
type streamReader struct {
	r      *io.PipeReader
	cancel context.CancelFunc
	// skipMarker drops the wrapper's "sandtop-published PGID" line, which
	// it writes to the daemon's stream, not the program's.
	skipMarker bool
	head       []byte
}

const publishedMarker = "sandtop-published "

func (r *streamReader) Read(p []byte) (int, error) {
	if !r.skipMarker {
		return r.r.Read(p)
	}
	// Hold the first bytes until the first line is complete.
	for r.skipMarker {
		buf := make([]byte, 4096)
		n, err := r.r.Read(buf)
		r.head = append(r.head, buf[:n]...)
		if i := bytes.IndexByte(r.head, '\n'); i >= 0 || err != nil || len(r.head) > 256 {
			if i >= 0 && bytes.HasPrefix(r.head, []byte(publishedMarker)) {
				r.head = r.head[i+1:]
			}
			r.skipMarker = false
		}
		if err != nil && len(r.head) == 0 {
			return 0, err
		}
	}
	if len(r.head) > 0 {
		n := copy(p, r.head)
		r.head = r.head[n:]
		return n, nil
	}
	return r.r.Read(p)
}

func (r *streamReader) Close() error {
	r.cancel()
	return r.r.Close()
}

// processConn adds terminal input and resize to a subscription.
type processConn struct {
	*streamReader
	proc *envd.Client
	pid  int
}

func (c *processConn) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	_, err := c.proc.Process.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(c.pid)}},
		Input:   &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: append([]byte(nil), p...)}},
	}))
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *processConn) Resize(rows, cols int) error {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	_, err := c.proc.Process.Update(ctx, connect.NewRequest(&process.UpdateRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(c.pid)}},
		Pty:     &process.PTY{Size: &process.PTY_Size{Rows: uint32(rows), Cols: uint32(cols)}},
	}))
	return err
}
