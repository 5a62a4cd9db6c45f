package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon/shimclient"
	"sandtop/backend/gen/process"
	"sandtop/backend/rawsock"
	"sandtop/backend/shim"
	"sandtop/wrapper"
)

// shimLink is the daemon's side of one group's shim.
type shimLink struct {
	pid  int    // the shim
	pgid int    // the group: the program's pid
	dir  string // state directory
	tag  *string
	argv []string
	conn net.Conn // nil for a shimless group
}

// spawnShim starts the command of a session-dir Start under a shim and
// returns once the program runs and its pid is published.
func (d *Daemon) spawnShim(sr spawnRequest, cwd string) (*proc, *subscriber, error) {
	req := sr.req
	cfg := req.GetProcess()
	if req.Pty != nil {
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s is for pipe processes, not a PTY", SessionDirHeader))
	}
	outCap, errCap, err := parseSpills(sr.spills)
	if err != nil {
		return nil, nil, err
	}
	env := exactEnv(cfg.GetEnvs())
	pathEnv := envValue(env, "PATH")
	if pathEnv == "" {
		pathEnv = os.Getenv("PATH")
	}
	// A program that cannot be executed is an exit status (127 or 126),
	// as with the wrapper on stock envd, not a failed Start.
	path, execErr := lookPath(cfg.GetCmd(), pathEnv, cwd)
	dir, err := d.sessionDir(sr.sessionDir)
	if err != nil {
		return nil, nil, err
	}
	argv := append([]string{cfg.GetCmd()}, cfg.GetArgs()...)
	spec := shim.Spec{
		StateDir: dir, Path: path, Argv: argv, Env: env, Dir: cwd,
		StdoutSpill: outCap, StderrSpill: errCap, Tag: req.GetTag(),
		RingBytes: int64(d.cfg.ReplayBytes), Key: d.shimKey,
	}
	if execErr != nil {
		spec.ExecError, spec.ExecCode = execErr.Error(), 126
		if errors.Is(execErr, fs.ErrNotExist) || errors.As(execErr, new(notInPathError)) {
			spec.ExecCode = 127
		}
	}
	if c := sr.user.cred; c != nil {
		spec.SetUser, spec.Uid, spec.Gid, spec.Groups = true, c.Uid, c.Gid, c.Groups
	}
	p := newProc(d, req, argv)
	sub := p.out.subscribe(false)
	fail := func(err error) (*proc, *subscriber, error) {
		sub.unsubscribe()
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}

	var inR *os.File
	if req.Stdin == nil || req.GetStdin() {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(connect.NewError(connect.CodeInternal, fmt.Errorf("stdin pipe: %w", err)))
		}
		inR = r
		p.stdin, p.inputFile = w, w
	}
	closeStdin := func() {
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
	}
	sh, hello, err := d.handOver(dir, inR, &spec)
	if inR != nil {
		_ = inR.Close()
	}
	if err != nil {
		closeStdin()
		return fail(err)
	}
	conn := sh.Conn
	p.pid = uint32(hello.Pid)
	p.started = time.UnixMilli(hello.StartedUnixMs)
	p.shim = &shimLink{pid: sh.Pid, pgid: hello.Pid, dir: dir, tag: req.Tag, argv: argv, conn: conn}
	d.reg.add(p)
	d.reg.addShim(p.shim)
	go d.followShim(p, hello)
	d.log.Info("process started", "pid", p.pid, "cmd", cfg.GetCmd(), "shim", sh.Pid, "tag", req.GetTag())
	return p, sub, nil
}

// startShim starts a shim for the spares: the reaper knows of it before
// it can exit, and the registry knows it is a shim, not a group's process.
func (d *Daemon) startShim() (*shimclient.Started, error) {
	return shimclient.Start(func(cmd *exec.Cmd) (int, func(), error) {
		err := theReaper.starting(func() error {
			if err := cmd.Start(); err != nil {
				return err
			}
			d.reg.markShimChild(cmd.Process.Pid, true)
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
		pid := cmd.Process.Pid
		// The shim's status says nothing (the program's comes over its
		// socket): it only has to be reaped, and without a thread per shim.
		wait, err := reapWithoutThread(pid)
		if err != nil {
			wait = func() { _ = cmd.Wait() }
		} else {
			_ = cmd.Process.Release()
		}
		return pid, func() {
			wait()
			d.reg.markShimChild(pid, false)
		}, nil
	})
}

// handOver gives a shim (the spare, if there is one) the program's stdin
// and spec and returns its hello. A spare that died while it waited (killed
// by someone) never read the spec, so its state directory holds no argv
// yet: then one fresh shim is tried, which cannot have waited.
func (d *Daemon) handOver(dir string, stdin *os.File, spec *shim.Spec) (*shimclient.Started, shim.Hello, error) {
	for attempt := 0; ; attempt++ {
		sh, err := d.spares.Take()
		if err != nil {
			return nil, shim.Hello{}, connect.NewError(connect.CodeInternal, err)
		}
		hello, err := shimclient.HandOver(sh.Conn, stdin, spec)
		if err == nil {
			return sh, hello, nil
		}
		// Killed before its socket closes (which may end it, and let its
		// reaping free the pid for someone else), and only while not yet
		// waited for.
		select {
		case <-sh.Gone():
		default:
			if sh.Pid > 1 { // Start refuses less; kill(-1) would reach every process of the user
				_ = syscall.Kill(sh.Pid, syscall.SIGKILL)
			}
		}
		sh.Discard()
		var failed *connect.Error
		refused := errors.As(err, &failed) && failed.Code() == connect.CodeFailedPrecondition
		if _, statErr := os.Lstat(filepath.Join(dir, wrapper.ArgvFile)); attempt > 0 || refused || !errors.Is(statErr, fs.ErrNotExist) {
			return nil, shim.Hello{}, err
		}
	}
}

// followShim feeds the shim's frames into p until the shim goes away, and
// publishes the end event once the program was reaped and its output ended
// (or a signal cut the wait for output short).
func (d *Daemon) followShim(p *proc, hello shim.Hello) {
	link := p.shim
	var mu sync.Mutex // orders publish against the end
	ended := false
	var eofs [2]chan struct{}
	for i := range eofs {
		eofs[i] = make(chan struct{})
	}
	var eofOnce [2]sync.Once
	markEOF := func(i int) { eofOnce[i].Do(func() { close(eofs[i]) }) }
	exitOnce := sync.Once{}
	leaderExit := func(ws syscall.WaitStatus, known bool) {
		exitOnce.Do(func() {
			p.exitedAt = time.Now()
			p.status, p.hasState = ws, known
			close(p.leaderExited)
			if p.stopArmed.Load() {
				p.stopReading()
			}
		})
	}
	if hello.StdoutEOF {
		markEOF(0)
	}
	if hello.StderrEOF {
		markEOF(1)
	}
	if hello.Exited {
		leaderExit(syscall.WaitStatus(hello.Status), true)
	}
	go func() {
		<-p.leaderExited
		for _, c := range eofs {
			select {
			case <-c:
			case <-p.cut:
			}
		}
		p.stopReading()
		p.stdinMu.Lock()
		if p.stdin != nil {
			_ = p.stdin.Close()
			p.stdin = nil
		}
		p.stdinMu.Unlock()
		var err error
		if !p.hasState {
			err = errors.New("the group's supervisor ended without reporting the exit status")
		}
		mu.Lock()
		ended = true
		p.out.close(p.endEvent(err))
		mu.Unlock()
		close(p.done)
		d.reg.retire(p)
	}()
	// Buffered: a frame's header and the start of its payload come in one
	// read.
	frames := bufio.NewReaderSize(rawsock.Wrap(link.conn), 4<<10)
	for {
		kind, b, o, err := readShimFrame(frames)
		if err != nil {
			break
		}
		switch kind {
		case shim.FrameStdout, shim.FrameStderr:
			mu.Lock()
			if !ended {
				k := kindStdout
				if kind == shim.FrameStderr {
					k = kindStderr
				}
				p.out.publishPooled(k, b, o) // o may be nil
			}
			mu.Unlock()
		case shim.FrameStdoutEOF:
			markEOF(0)
		case shim.FrameStderrEOF:
			markEOF(1)
		case shim.FrameExit:
			n, _ := strconv.Atoi(string(b))
			leaderExit(syscall.WaitStatus(n), true)
		case shim.FrameLog:
			d.log.Warn("group supervisor", "pgid", link.pgid, "dir", link.dir, "msg", string(b))
		}
	}
	_ = link.conn.Close()
	d.reg.removeShim(link)
	// A shim that was killed leaves its group running: a plain group of
	// the sandbox from now on.
	d.keepShimless(link)
	// The shim is gone (or its socket broke): nothing more will come.
	leaderExit(0, false)
	markEOF(0)
	markEOF(1)
}

// adoptShims reconnects to the shims a previous daemon left running, found
// through the runtime root: each state directory's supervisor file names a
// shim by pid and start time, so a reused pid is never taken for it.
func (d *Daemon) adoptShims() {
	processes := filepath.Join(d.root, wrapper.ProcessesDir)
	entries, err := os.ReadDir(processes)
	if err != nil {
		return
	}
	// Read once, and only if some directory's shim is gone.
	var table *procTable
	readTable := func() procTable {
		if table == nil {
			t := readProcTable()
			table = &t
		}
		return *table
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(processes, e.Name())
		if err := d.adoptShim(dir, readTable); err != nil {
			d.log.Debug("not adopted", "dir", dir, "err", err)
		}
	}
}

func (d *Daemon) adoptShim(dir string, table func() procTable) error {
	sd, err := shim.OpenStateDir(dir)
	if err != nil {
		return err
	}
	defer sd.Close()
	f, err := sd.Open(wrapper.SupervisorFile)
	if errors.Is(err, fs.ErrNotExist) {
		// A shim writes it once the program runs; one killed before then
		// may have left the group running.
		if err := d.adoptShimless(sd, dir, table); err != nil {
			return fmt.Errorf("no supervisor file, and no group: %w", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	b := make([]byte, 64)
	n, _ := f.Read(b)
	_ = f.Close()
	fields := strings.Fields(string(b[:n]))
	if len(fields) != 2 {
		return fmt.Errorf("supervisor file %q", b[:n])
	}
	pid, err1 := strconv.Atoi(fields[0])
	ticks, err2 := strconv.ParseUint(fields[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 1 {
		return fmt.Errorf("supervisor file %q", b[:n])
	}
	if pr, err := shim.ReadProc(pid); err != nil || pr.StartTicks != ticks || pr.Sid != pid {
		// Killed, with the group perhaps running on without it.
		if err := d.adoptShimless(sd, dir, table); err != nil {
			return fmt.Errorf("shim %d is gone, and its group: %w", pid, err)
		}
		return nil
	}
	if d.reg.shimByPid(pid) != nil {
		return nil // ours already
	}
	conn, hello, err := shimclient.Reconnect(sd.ProcPath(wrapper.SocketFile), d.shimKey, pid)
	if err != nil {
		return err
	}
	var tag *string
	if hello.Tag != "" {
		tag = &hello.Tag
	}
	argv := hello.Argv
	if len(argv) == 0 {
		argv = []string{"?"}
	}
	p := newProc(d, &process.StartRequest{Tag: tag, Process: &process.ProcessConfig{Cmd: argv[0], Args: argv[1:]}}, argv)
	p.pid = uint32(hello.Pid)
	p.started = time.UnixMilli(hello.StartedUnixMs)
	p.shim = &shimLink{pid: pid, pgid: hello.Pid, dir: dir, tag: tag, argv: argv, conn: conn}
	d.reg.add(p)
	d.reg.addShim(p.shim)
	go d.followShim(p, hello)
	d.log.Info("group adopted", "pgid", hello.Pid, "shim", pid, "dir", dir, "exited", hello.Exited)
	return nil
}

// parseSpills reads SpillHeader.
func parseSpills(v string) (int64, int64, error) {
	if v == "" {
		return -1, -1, nil
	}
	f := strings.Fields(v)
	if len(f) == 2 {
		out, err1 := strconv.ParseInt(f[0], 10, 64)
		errc, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil && out >= -1 && errc >= -1 {
			return out, errc, nil
		}
	}
	return 0, 0, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s: %q is not two byte counts (-1 for none)", SpillHeader, v))
}

// exactEnv renders the request's envs, sorted by name for a stable order.
func exactEnv(req map[string]string) []string {
	keys := make([]string, 0, len(req))
	for k := range req {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+req[k])
	}
	return env
}
