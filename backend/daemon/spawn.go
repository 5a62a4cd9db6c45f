package daemon

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/gen/process"
)

// shellPath runs a command that cannot be found, as envd's sh would.
const shellPath = "/bin/sh"

// newProc is a registered-to-be process for req with a fresh output hub.
func newProc(d *Daemon, req *process.StartRequest, argv []string) *proc {
	return &proc{
		tag:          req.Tag,
		config:       req.GetProcess(),
		argv:         argv,
		out:          newHub(d.cfg.ReplayBytes, d.cfg.StallTimeout),
		leaderExited: make(chan struct{}),
		cut:          make(chan struct{}),
		done:         make(chan struct{}),
	}
}

// spawnRequest is a validated StartRequest.
type spawnRequest struct {
	req  *process.StartRequest
	user userInfo
	// sessionDir is SessionDirHeader's value: a state directory to create,
	// where a shim publishes and supervises the group.
	sessionDir string
	// spills is SpillHeader's value.
	spills string
	// checkProgram: CheckProgramHeader was set.
	checkProgram bool
}

// spawn starts the process described by sr, registers it, and returns it with
// a subscriber attached before the first byte could be written.
func (d *Daemon) spawn(sr spawnRequest) (*proc, *subscriber, error) {
	req := sr.req
	cfg := req.GetProcess()
	if cfg == nil || cfg.GetCmd() == "" {
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("process.cmd is empty"))
	}
	if err := checkEnvNames(cfg.GetEnvs()); err != nil {
		return nil, nil, err
	}
	_, workdir := d.defaults.get()
	cwd, err := resolveCwd(cfg.Cwd, sr.user, workdir)
	if err != nil {
		return nil, nil, err
	}
	if sr.sessionDir != "" {
		if sr.checkProgram {
			if err := checkShimProgram(cfg, cwd); err != nil {
				return nil, nil, err
			}
		}
		return d.spawnShim(sr, cwd)
	}
	base := d.baseEnv(sr.user)
	env := childEnv(sr.user, base, cfg.GetEnvs())
	argv := append([]string{cfg.GetCmd()}, cfg.GetArgs()...)
	// The program is looked up on the sandbox's PATH, not on one the
	// request sets: the request's PATH is the child's own business.
	path, err := lookPath(cfg.GetCmd(), envValue(childEnv(sr.user, base, nil), "PATH"), cwd)
	if err != nil {
		if executable(shellPath) != nil {
			return nil, nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
		// envd runs every command through sh's exec, so a command it cannot
		// run still starts: sh says why on stderr and exits 126 or 127.
		path = shellPath
		argv = append([]string{"sh", "-c", `exec "$@"`, "sh"}, argv...)
	}
	cmd := &exec.Cmd{
		Path: path,
		Args: argv,
		Env:  env,
		Dir:  cwd,
	}
	p := newProc(d, req, cmd.Args)
	p.out.setLag(plainLagWindow)
	p.cmd = cmd
	sub := p.out.subscribe(false)

	var toClose []*os.File // child's ends, closed once it has them
	var readers sync.WaitGroup
	var pumps []pumpFile // output read in goroutines of their own
	closeAll := func() {
		for _, f := range toClose {
			_ = f.Close()
		}
	}
	var attr syscall.SysProcAttr
	sr.user.apply(&attr)
	if req.Pty != nil {
		size := req.GetPty().GetSize()
		cols, rows := size.GetCols(), size.GetRows()
		if cols > 0xffff || rows > 0xffff {
			return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("pty size %dx%d is out of range (0..65535)", cols, rows))
		}
		master, tty, err := openPTY(uint16(cols), uint16(rows))
		if err != nil {
			return nil, nil, connect.NewError(connect.CodeInternal, err)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		attr.Setsid, attr.Setctty = true, true // new session, tty as controlling terminal
		p.pty, p.ttyName, p.inputFile = master, tty.Name(), master
		p.readers = []*os.File{master}
		toClose = append(toClose, tty)
	} else {
		outR, outW, err := quietPipe()
		if err != nil {
			return nil, nil, connect.NewError(connect.CodeInternal, fmt.Errorf("stdout pipe: %w", err))
		}
		errR, errW, err := quietPipe()
		if err != nil {
			_, _ = unix.Close(outR), outW.Close()
			return nil, nil, connect.NewError(connect.CodeInternal, fmt.Errorf("stderr pipe: %w", err))
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		toClose = append(toClose, outW, errW)
		// From here on p.stopReading closes the read ends.
		pumps = p.watchOutput([2]int{outR, errR}, &readers)
		if req.Stdin == nil || req.GetStdin() {
			inR, inW, err := os.Pipe()
			if err != nil {
				closeAll()
				p.stopReading()
				return nil, nil, connect.NewError(connect.CodeInternal, fmt.Errorf("stdin pipe: %w", err))
			}
			cmd.Stdin = inR
			p.stdin, p.inputFile = inW, inW
			toClose = append(toClose, inR)
		} // else os/exec gives the child /dev/null
		// As in envd, a plain child stays in the daemon's process group and
		// session, so `setsid` under it does not fork. Group-wide control is
		// for session-dir starts, which run under a shim of their own.
	}
	cmd.SysProcAttr = &attr

	var onExit func(func())
	err = theReaper.starting(func() error {
		if err := cmd.Start(); err != nil {
			return err
		}
		pid := cmd.Process.Pid // Release forgets it
		wait, exitFn, err := waitWithoutThread(pid)
		if err != nil {
			// Without a pidfd, os/exec's own Wait (a thread while it runs).
			wait = func() (syscall.WaitStatus, error) {
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
					return ws, nil
				}
				return 0, err
			}
			exitFn = func(fn func()) { go fn() }
		} else {
			// The pidfd reaps it now; os/exec must not hold a claim too.
			_ = cmd.Process.Release()
		}
		// The child has its environment: the daemon keeps no copy.
		cmd.Env = nil
		p.wait, onExit = wait, exitFn
		p.pid = uint32(pid)
		p.started = time.Now()
		d.reg.add(p)
		return nil
	})
	closeAll()
	if err != nil {
		p.stopReading()
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
		sub.unsubscribe()
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("start %s: %w", clip(cfg.GetCmd()), bare(err)))
	}
	if p.pty != nil {
		readers.Add(1)
		go p.pump(p.pty, kindPTY, &readers)
	}
	for _, f := range pumps {
		go p.pump(f.f, f.kind, &readers)
	}
	onExit(func() { p.supervise(&readers, d.reg.retire) })
	d.log.Info("process started", "pid", p.pid, "cmd", cfg.GetCmd(), "pty", p.pty != nil, "tag", req.GetTag())
	return p, sub, nil
}

// checkShimProgram refuses, for CheckProgramHeader, a program that
// spawnShim's look-up would not find: on the request's PATH, else the
// daemon's, from cwd.
func checkShimProgram(cfg *process.ProcessConfig, cwd string) error {
	pathEnv, ok := cfg.GetEnvs()["PATH"]
	if !ok || pathEnv == "" {
		pathEnv = os.Getenv("PATH")
	}
	if _, err := lookPath(cfg.GetCmd(), pathEnv, cwd); err != nil {
		e := connect.NewError(connect.CodeNotFound, err)
		e.Meta().Set(CheckProgramHeader, "missing")
		return e
	}
	return nil
}

// childEnv builds the child's environment from scratch, as envd does: PATH
// (the daemon's), HOME, USER, LOGNAME, then the sandbox-wide base env, then
// the request's envs; a later entry of the same name wins. Nothing else of
// the daemon's own environment leaks through.
func childEnv(u userInfo, base []string, req map[string]string) []string {
	var keys []string
	vals := map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	set("PATH", os.Getenv("PATH"))
	set("HOME", u.home)
	set("USER", u.name)
	set("LOGNAME", u.name)
	for _, kv := range base {
		if k, v, ok := cutEnv(kv); ok {
			set(k, v)
		}
	}
	reqKeys := make([]string, 0, len(req))
	for k := range req {
		reqKeys = append(reqKeys, k)
	}
	sort.Strings(reqKeys)
	for _, k := range reqKeys {
		set(k, req[k])
	}
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+vals[k])
	}
	return env
}

// checkEnvNames refuses names execve would misread: empty ones, and ones
// holding "=" (the child would see another name and value) or NUL.
func checkEnvNames(envs map[string]string) error {
	for k := range envs {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return connect.NewError(connect.CodeInvalidArgument,
				fmt.Errorf("env name %q is not valid: a name must be non-empty and hold no '=' or NUL", clip(k)))
		}
	}
	return nil
}

func cutEnv(kv string) (k, v string, ok bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return "", "", false
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := cutEnv(env[i]); ok && k == key {
			return v
		}
	}
	return ""
}
