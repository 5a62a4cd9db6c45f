// Package shim is the per-group supervisor sandtop's daemon runs for every
// session-dir Start: its own executable, re-run with a hidden first
// argument (Subcommand). The shim leads a new session, is the child
// subreaper of everything the program starts, keeps the daemon's user (the
// program alone runs as the requested user, so it cannot write the state
// directory), publishes the group in the wrapper's layout with no-follow
// atomic writes, reaps with wait4 and publishes the exact exit facts, caps
// the spill files, and forwards output to the daemon — or, while no daemon
// reads, into a bounded ring file, so the program never blocks or gets
// SIGPIPE. It exits once no process it supervises is left.
//
// The program leads its own session and process group (pid = pgid = sid),
// so a signal to the group (the published pgid) never reaches the shim.
package shim

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/outlog"
	"sandtop/wrapper"
)

// Subcommand is the hidden first argument that makes the executable a shim.
const Subcommand = "__sandtop-shim"

// shimSubcommand runs the shim, or the stand-in for a program that could
// not be executed, when the executable was started as one; see
// RunIfSubcommand.
func shimSubcommand() {
	if len(os.Args) > 1 && os.Args[1] == Subcommand {
		os.Exit(Main())
	}
	if len(os.Args) == 4 && os.Args[1] == execFailedSubcommand {
		// Stands in for a program that could not be executed, so the
		// group still exists and ends with the shell's status for it.
		code, _ := strconv.Atoi(os.Args[2])
		fmt.Fprintln(os.Stderr, os.Args[3])
		os.Exit(code)
	}
}

// execFailedSubcommand runs in place of a program that cannot be executed.
const execFailedSubcommand = "__sandtop-exec-failed"

// Main runs the shim with fd 3 connected to the daemon and returns the exit
// code. The daemon sends the program's stdin (see SendStdin), then the spec.
func Main() int {
	// First, so that even a spare survives them. The channel is never
	// read: each signal is dropped once one waits.
	signal.Notify(make(chan os.Signal, 1), survived...)
	keepFromPrograms()
	f := os.NewFile(3, "daemon")
	fc, err := net.FileConn(f)
	// FileConn holds its own duplicate: fd 3 itself, left open, would
	// reach the program, which could then write frames to the daemon, and
	// would keep the daemon's end open after the shim died.
	_ = f.Close()
	if err != nil {
		return 2
	}
	ctl, ok := fc.(*net.UnixConn)
	if !ok {
		return 2
	}
	// A shim usually waits here as the daemon's spare, so what needs no
	// spec is done now, off the path from the daemon's Start to the hello.
	warmUp()
	stdin, err := RecvStdin(ctl)
	if err != nil {
		// A spare the daemon never used ends here when the daemon goes.
		return 2
	}
	kind, b, err := ReadFrame(ctl)
	if err != nil || kind != FrameSpec {
		return 2
	}
	var spec Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		_ = WriteFrame(ctl, FrameFailed, []byte("shim: bad spec: "+err.Error()))
		return 2
	}
	s := &supervisor{spec: spec, stdin: stdin}
	if err := s.prepare(); err != nil {
		_ = WriteFrame(ctl, FrameFailed, []byte(describe(err)))
		return 1
	}
	if err := s.start(); err != nil {
		_ = WriteFrame(ctl, FrameFailed, []byte(describe(err)))
		s.abandon()
		return 1
	}
	s.out.attach(ctl)
	s.settle()
	s.serve()
	s.reap()
	s.finish()
	return 0
}

// subreaperErr is why the shim could not become the child subreaper of
// what the program starts; warmUp sets it, and prepare fails the Start
// with it.
var subreaperErr error

// keepFromPrograms marks every descriptor the shim inherited beyond its
// stdio close-on-exec, so that none reaches the program: not the daemon's
// socket (fd 3), nor whatever the daemon's own starter left open.
func keepFromPrograms() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Kernels before 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// survived are the signals a program or an operator can reasonably send
// the shim (kill $PPID, a kill of the shim's session, a terminal's hangup
// had it one). Each would end a Go program and leave the group without
// its supervisor; the shim catches them and does nothing. Caught, not
// ignored: a caught signal is reset to its default for the program on
// exec, where an ignored one would be inherited. SIGKILL and SIGSTOP
// cannot be caught; a group whose shim is gone anyway stays a plain group
// of the sandbox (see the daemon's shimless groups).
var survived = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM}

// warmUp does the shim's work that needs no spec, while it waits for one:
// it becomes the child subreaper and fills encoding/json's caches for the frames it reads and writes.
func warmUp() {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		subreaperErr = fmt.Errorf("shim: become child subreaper: %w", err)
	}
	var spec Spec
	_ = json.Unmarshal([]byte("{}"), &spec)
	_, _ = json.Marshal(Hello{})
}

// supervisor is the state of one shim.
type supervisor struct {
	spec    Spec
	stdin   *os.File // the program's; nil: /dev/null
	dir     *StateDir
	pid     int // the program; its pgid
	started time.Time
	out     *router
	spills  [2]*spill
	readers [2]*os.File
	pumps   sync.WaitGroup
	// stopPumps (an eventfd) ends the waits of pumps whose pipes have left
	// Go's poller (see fastPipe), as closing readers ends the others'.
	stopPumps int
	ln        *net.UnixListener
	// unpublished: the exit status could not be written.
	unpublished bool
	// pidFile is the pid file, created with its room reserved before the
	// program starts and written once it runs.
	pidFile *os.File
}

// prepare does everything that can fail before the program runs: the
// state directory, the files that describe the group, the spills, the
// socket. A failure here is the Start's error.
func (s *supervisor) prepare() error {
	if subreaperErr != nil {
		return subreaperErr
	}
	dir, err := OpenStateDir(s.spec.StateDir)
	if err != nil {
		return err
	}
	s.dir = dir
	// The one write that must precede the program: it proves the
	// directory writable, so a Start on a full disk fails saying so.
	if err := dir.CreateFile(wrapper.ArgvFile, nulTerminated(s.spec.Argv)); err != nil {
		return err
	}
	if s.spec.Tag != "" {
		if err := dir.CreateFile(wrapper.TagFile, []byte(s.spec.Tag+"\n")); err != nil {
			return err
		}
	}
	// Room for the reason, reserved before the program can fill the disk:
	// should the exit status not fit later, this becomes the problem file
	// by rename and in-place writes, which need no new space.
	if err := dir.CreateFile(reservedProblem, make([]byte, 512)); err != nil {
		return err
	}
	// The pid is known only once the program runs, which may fill the
	// disk at once: its file is made now, with its blocks reserved.
	if s.pidFile, err = dir.CreateReserved(wrapper.PidFile, 32); err != nil {
		return err
	}
	s.out = &router{ring: newRing(dir, s.spec.RingBytes)}
	return nil
}

// settle finishes the publication once the daemon has the hello: the
// spills, the supervisor file and the socket a restarted daemon reconnects
// to. Each costs a file creation, which on a slow disk is most of a spawn,
// and none is needed before the start event: output waits in the pipes
// until the pumps run, and only a daemon that restarts needs the other two.
// A failure here cannot fail the Start any more; it is logged to the
// daemon, and the group keeps running without what failed.
func (s *supervisor) settle() {
	marks := s.createMarks()
	for i, c := range []struct {
		name string
		cap  int64
	}{{wrapper.StdoutSpillFile, s.spec.StdoutSpill}, {wrapper.StderrSpillFile, s.spec.StderrSpill}} {
		if c.cap < 0 {
			continue
		}
		f, err := s.dir.Create(c.name)
		if err != nil {
			s.out.log("spill not kept: " + describe(err))
			continue
		}
		s.spills[i] = &spill{f: f, left: c.cap, marks: marks, stream: outlog.Stream(i + 1)}
	}
	if s.spec.Dir != "" {
		if err := s.dir.CreateFile(wrapper.CwdFile, []byte(s.spec.Dir+"\n")); err != nil {
			s.out.log("working directory not published: " + describe(err))
		}
	}
	ticks, _ := StartTicks(os.Getpid())
	if err := s.dir.WriteLine(wrapper.SupervisorFile, fmt.Sprintf("%d %d", os.Getpid(), ticks)); err != nil {
		s.out.log("not adoptable after a daemon restart: " + describe(err))
	}
	_ = s.dir.Remove(wrapper.SocketFile)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: s.dir.ProcPath(wrapper.SocketFile), Net: "unix"})
	if err != nil {
		s.out.log("no socket for a restarted daemon: " + describe(&os.PathError{Op: "listen", Path: s.dir.Path() + "/" + wrapper.SocketFile, Err: err}))
		return
	}
	ln.SetUnlinkOnClose(false) // the /proc path would not name it later
	s.ln = ln
}

// start runs the program and publishes its pid.
func (s *supervisor) start() error {
	var files [3]*os.File
	files[0] = os.Stdin // /dev/null
	if s.stdin != nil {
		files[0] = s.stdin
	}
	var writers []*os.File
	for i := range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("shim: output pipe: %w", err)
		}
		s.readers[i], files[i+1] = r, w
		writers = append(writers, w)
	}
	// Its own session and group (pid = pgid = sid), as the wrapper's inner
	// half had: the shim's session holds only the shim.
	sys := &syscall.SysProcAttr{Setsid: true}
	if s.spec.SetUser {
		sys.Credential = &syscall.Credential{Uid: s.spec.Uid, Gid: s.spec.Gid, Groups: s.spec.Groups}
	}
	attr := procAttr(s.spec.Dir, s.spec.Env, files[:], sys)
	pid := 0
	err := errors.New(s.spec.ExecError)
	if s.spec.ExecError == "" {
		pid, err = startProcess(s.spec.Path, s.spec.Argv, attr)
	}
	if err != nil {
		// As a shell would: 127 when there is no such program, 126 when
		// it cannot be executed; the message goes to the program's stderr.
		code := 126
		if s.spec.ExecCode != 0 {
			code = s.spec.ExecCode
		} else if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		msg := "sandtop: " + s.spec.Argv[0] + ": " + err.Error()
		var ferr error
		if pid, ferr = startProcess("/proc/self/exe", []string{"sandtop-exec-failed", execFailedSubcommand, strconv.Itoa(code), msg}, attr); ferr == nil {
			err = nil
		} // else the process attributes themselves failed (a cwd): say so
	}
	runtime.KeepAlive(files)
	for _, w := range writers {
		_ = w.Close()
	}
	if s.stdin != nil {
		_ = s.stdin.Close() // the program's stdin ends with the daemon's pipe alone
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", s.spec.Argv[0], err)
	}
	s.pid, s.started = pid, time.Now()
	_, err = s.pidFile.Write([]byte(strconv.Itoa(s.pid) + "\n"))
	if cerr := s.pidFile.Close(); err == nil {
		err = cerr
	}
	s.pidFile = nil
	if err != nil {
		_ = unix.Kill(-s.pid, unix.SIGKILL)
		return fmt.Errorf("write %s/%s: %w", s.spec.StateDir, wrapper.PidFile, unwrapPathErr(err))
	}
	s.out.hello = Hello{ShimPid: os.Getpid(), Pid: s.pid, StartedUnixMs: s.started.UnixMilli(), Argv: s.spec.Argv, Tag: s.spec.Tag}
	return nil
}

// procAttr is what os.StartProcess would hand syscall.StartProcess for
// these files: each in blocking mode (Fd does that), as a program expects
// of its stdio, and the shim's environment when env is nil.
func procAttr(dir string, env []string, files []*os.File, sys *syscall.SysProcAttr) *syscall.ProcAttr {
	if env == nil {
		env = syscall.Environ()
	}
	fds := make([]uintptr, len(files))
	for i, f := range files {
		fds[i] = f.Fd()
	}
	return &syscall.ProcAttr{Dir: dir, Env: env, Files: fds, Sys: sys}
}

// startProcess is os.StartProcess without the os package's pidfd checks:
// in a fresh process its first start also forks a throwaway child to see
// whether clone takes CLONE_PIDFD, and a shim starts one program, which it
// reaps with wait4 and never through a pidfd. Errors read as os's do.
func startProcess(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	pid, _, err := syscall.StartProcess(path, argv, attr)
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: path, Err: err}
	}
	return pid, nil
}

// abandon cleans up after a failed start: reap what was started.
func (s *supervisor) abandon() {
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err == unix.ECHILD || (err != nil && err != unix.EINTR) {
			return
		}
	}
}

// serve pumps the output and accepts reconnecting daemons.
func (s *supervisor) serve() {
	s.stopPumps = -1
	if fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err == nil {
		s.stopPumps = fd
	}
	kinds := [2]byte{FrameStdout, FrameStderr}
	for i := range 2 {
		s.pumps.Add(1)
		go s.pump(s.readers[i], s.spills[i], kinds[i])
	}
	if s.ln != nil {
		go s.accept()
	}
}

func (s *supervisor) pump(r *os.File, sp *spill, kind byte) {
	defer s.pumps.Done()
	buf := make([]byte, 64<<10)
	fast := false    // the stream has filled its pipe once
	var fp *fastPipe // its pipe, out of Go's poller, once it is spliced
	for {
		if fp == nil && fast && s.stopPumps >= 0 && (sp == nil || sp.full()) {
			var err error
			if fp, err = detach(r, s.stopPumps); err != nil {
				break // the pipe was closed (see finish)
			}
			defer fp.close()
		}
		if fp != nil {
			// A fast stream whose bytes the shim need not see: they go
			// from the pipe to the daemon's socket by splice, whole frames
			// of whatever the pipe holds, without a copy through here.
			avail, err := fp.pending()
			if err != nil {
				break
			}
			if s.out.splice(kind, fp.fd, min(avail, maxSpliceFrame)) {
				continue
			}
			// No daemon (any more): these bytes go to the ring.
			n, err := fp.read(buf[:min(avail, len(buf))])
			if n > 0 {
				s.out.output(kind, buf[:n])
			}
			if err != nil {
				break
			}
			continue
		}
		n, err := r.Read(buf)
		if n > 0 {
			if sp != nil {
				if werr := sp.write(buf[:n]); werr != nil {
					s.out.log(fmt.Sprintf("spill %s: %v", sp.f.Name(), werr))
				}
			}
			s.out.output(kind, buf[:n])
		}
		if n == len(buf) && len(buf) < FastReadSize {
			// The pipe was full: a program writing this fast is paced by
			// our round trips, so it gets a larger pipe and larger reads.
			// Only then: every user's pipes share a soft limit, and 1,000
			// idle groups must not spend it. (The output above is sent
			// before buf is replaced.)
			GrowPipe(r)
			buf = make([]byte, FastReadSize)
			fast = true
		}
		if err != nil {
			break
		}
	}
	if sp != nil {
		_ = sp.f.Close()
	}
	s.out.eof(kind)
}

// maxSpliceFrame bounds one spliced frame: the pipe of a fast stream.
const maxSpliceFrame = MaxOutputFrame

// MaxOutputFrame bounds the output in one frame the shim sends live:
// larger frames cost fewer round trips on every hop to the client.
const MaxOutputFrame = 4 * FastReadSize

// A fast stream that caught up with its program finds a few KiB in the
// pipe, and every frame costs the same on each hop to the client however
// small. So below gatherBytes the shim waits a moment for the program to
// write more, and sends as soon as the program stops adding: a program
// that paused loses gatherWait, a trickle at most gatherRounds of it.
const (
	gatherBytes  = 64 << 10
	gatherWait   = 200 * time.Microsecond
	gatherRounds = 4
)

// gather returns what the pipe holds once it has gathered enough (see
// gatherBytes), starting from avail; inq tells what it holds now.
func gather(avail int, inq func() (int, error)) int {
	for i := 0; i < gatherRounds && avail > 0 && avail < gatherBytes; i++ {
		time.Sleep(gatherWait)
		now, err := inq()
		if err != nil || now <= avail {
			break
		}
		avail = now
	}
	return avail
}

// FastReadSize is the read size, and a quarter of the pipe size, for a
// stream that has filled its pipe once.
const FastReadSize = 256 << 10

// GrowPipe asks for a 1 MiB pipe behind r; a refusal (the user's pipe
// pages are spent, or r is no pipe) keeps it as it is.
func GrowPipe(r *os.File) {
	if sc, err := r.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 4*FastReadSize) })
	}
}

// accept hands each daemon that connects the group (see router.attach). Only
// the shim's own user (or root) may connect, the directory already keeps
// others out, and only with the daemon's key: any other process of the
// user that connected would take the group's output from its daemon.
func (s *supervisor) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return
		}
		if !sameUser(c) {
			_ = c.Close()
			continue
		}
		if s.spec.Key == "" {
			s.out.attach(c)
			continue
		}
		go s.admit(c)
	}
}

// authWait bounds how long a connection may take to send the key.
const authWait = 5 * time.Second

// admit attaches c once it has sent the daemon's key; it closes it
// otherwise, with nothing said.
func (s *supervisor) admit(c *net.UnixConn) {
	_ = c.SetReadDeadline(time.Now().Add(authWait))
	if !ReadAuth(c, s.spec.Key) {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	s.out.attach(c)
}

// reap collects every child until none is left: the program (whose status
// is published), members it left behind, and escapees reparented here.
func (s *supervisor) reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return // ECHILD: nothing left
		}
		if pid == s.pid {
			s.publishExit(ws)
		}
	}
}

// finish waits briefly for output held by non-descendants, then leaves.
func (s *supervisor) finish() {
	done := make(chan struct{})
	go func() { s.pumps.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		for _, r := range s.readers {
			_ = r.Close()
		}
		if s.stopPumps >= 0 {
			var one [8]byte
			binary.NativeEndian.PutUint64(one[:], 1)
			_, _ = unix.Write(s.stopPumps, one[:])
		}
		<-done
	}
	if s.ln != nil {
		_ = s.ln.Close()
		_ = s.dir.Remove(wrapper.SocketFile)
	}
	if !s.unpublished {
		_ = s.dir.Remove(wrapper.SupervisorFile)
	}
	s.out.close()
}

// publishExit writes the exact facts: the signal (and core) or the exit
// code, exit-code last since readers take it as the end.
func (s *supervisor) publishExit(ws unix.WaitStatus) {
	s.writeOutlived()
	var err error
	code := ws.ExitStatus()
	if ws.Signaled() {
		sig := int(ws.Signal())
		code = 128 + sig
		err = s.dir.WriteLine(wrapper.SignalFile, strconv.Itoa(sig))
		if err == nil && ws.CoreDump() {
			err = s.dir.WriteLine(wrapper.CoreFile, "1")
		}
	}
	if err == nil {
		err = s.dir.WriteLine(wrapper.ExitCodeFile, strconv.Itoa(code))
	}
	if err != nil {
		// The supervisor file stays behind too (see finish), so a reader
		// knows the status is unknown even if the reason is lost.
		s.unpublished = true
		reason := "exit unknown: could not publish the exit status: " + describe(err)
		s.out.log(reason)
		if s.dir.Rename(reservedProblem, wrapper.ProblemFile) == nil {
			overwrite(s.dir, wrapper.ProblemFile, reason)
		}
	} else {
		_ = s.dir.Remove(reservedProblem)
	}
	s.out.exit(int(ws))
}

// writeOutlived records the processes still running when the program ended.
func (s *supervisor) writeOutlived() {
	var b strings.Builder
	for _, d := range Descendants(os.Getpid()) {
		fmt.Fprintf(&b, "%d %d %s\n", d.Pid, d.Pgid, d.Comm)
	}
	if b.Len() > 0 {
		_ = s.dir.WriteFile(wrapper.OutlivedFile, []byte(b.String()))
	}
}

// reservedProblem holds the room for the problem file.
const reservedProblem = ".problem"

// overwrite writes line over the start of name, in place, and cuts the
// rest: on a full disk, blocks the file already has still take it.
func overwrite(d *StateDir, name, line string) {
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	b := []byte(line + "\n")
	if len(b) > 512 {
		b = append(b[:511], '\n')
	}
	if n, err := unix.Pwrite(fd, b, 0); err == nil {
		_ = unix.Ftruncate(fd, int64(n))
	}
	_ = unix.Close(fd)
}

// createMarks makes the file of arrival marks (package outlog) when a
// spill is to be kept: before the spills, so that a reader that finds a
// spill without it knows it is an older layout. Without it the spills
// are kept all the same, read back without times.
func (s *supervisor) createMarks() *outlog.Writer {
	if s.spec.StdoutSpill < 0 && s.spec.StderrSpill < 0 {
		return nil
	}
	marks, err := newMarks(s.dir)
	if err != nil {
		s.out.log("output kept without arrival times: " + describe(err))
	}
	return marks
}

// newMarks creates the marks file in dir.
func newMarks(dir *StateDir) (*outlog.Writer, error) {
	f, err := dir.Create(outlog.File)
	if err != nil {
		return nil, err
	}
	w, err := outlog.NewWriter(f)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return w, nil
}

// spill is one capped spill file, and the marks of when its pieces came.
type spill struct {
	f      *os.File
	left   int64
	err    error
	marks  *outlog.Writer // nil: no marks kept
	stream outlog.Stream
}

// full says nothing more will be written to the spill.
func (sp *spill) full() bool { return sp.err != nil || sp.left <= 0 }

func (sp *spill) write(b []byte) error {
	if sp.err != nil || sp.left <= 0 {
		return nil
	}
	n := min(int64(len(b)), sp.left)
	sp.left -= n
	wrote, err := sp.f.Write(b[:n])
	sp.marks.Add(sp.stream, wrote) // what is in the spill, even cut short
	if err != nil {
		sp.err = err
		return err
	}
	return nil
}

func nulTerminated(argv []string) []byte {
	var b []byte
	for _, a := range argv {
		b = append(append(b, a...), 0)
	}
	return b
}

func sameUser(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err != nil || cred == nil {
		return false
	}
	return cred.Uid == 0 || int(cred.Uid) == os.Geteuid()
}
