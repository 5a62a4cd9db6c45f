package daemon

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/backend/gen/process"
)

// readBufSize is the size of one read from a pipe or PTY master. Pipes hold
// 64 KiB by default, so one read can empty a full pipe.
const readBufSize = 64 << 10

// proc is one process the daemon started.
type proc struct {
	pid     uint32
	seq     uint64 // start order, for tag lookups
	tag     *string
	config  *process.ProcessConfig
	argv    []string
	started time.Time
	cmd     *exec.Cmd
	// wait reaps the started process and gives its status (see
	// waitWithoutThread); set once it started.
	wait func() (syscall.WaitStatus, error)
	out  *hub

	pty     *os.File // PTY master; nil for pipes
	ttyName string   // e.g. /dev/pts/3

	stdinMu   sync.Mutex // serializes input writes and guards stdin
	stdin     *os.File   // write end of the stdin pipe; nil when off or closed
	inputFile *os.File   // the PTY master or the stdin write end, fixed at start

	// shim is set for a session-dir start: the group's supervisor, which
	// feeds out and reports the exit (cmd is nil then).
	shim *shimLink

	readers  []*os.File     // read ends (or the PTY master), closed to stop reading
	quiet    []*quietStream // output pipes in the quiet set, cut to stop reading
	stopOnce sync.Once
	cut      chan struct{} // closed by stopReading
	// stopArmed means: once the leader has exited, stop waiting for the
	// output pipes (a signal was sent; leftovers must not hold the end).
	stopArmed    atomic.Bool
	leaderExited chan struct{}

	done     chan struct{} // closed after the end event is published
	status   syscall.WaitStatus
	hasState bool // status is known (false also when a shim died unreported)
	exitedAt time.Time
}

// leaderGone says the started process has been reaped (by the daemon, or
// by its shim): its pid is free for the kernel to give to another process.
func (p *proc) leaderGone() bool {
	select {
	case <-p.leaderExited:
		return true
	default:
		return false
	}
}

// isPTY reports whether the process runs on a terminal.
func (p *proc) isPTY() bool { return p.pty != nil }

// stopReading closes the output read ends so the readers finish now.
func (p *proc) stopReading() {
	p.stopOnce.Do(func() {
		close(p.cut)
		for _, f := range p.readers {
			_ = f.Close()
		}
		for _, s := range p.quiet {
			s.stop()
		}
	})
}

// pumpFile is an output read end read by a pump of its own.
type pumpFile struct {
	f    *os.File
	kind streamKind
}

// watchOutput puts the read ends of the stdout and stderr pipes in the
// quiet set, whose reads count in readers; p.stopReading closes them
// from now on. A read end the set cannot take (it could not be made) is
// returned, to be read by a pump.
func (p *proc) watchOutput(fds [2]int, readers *sync.WaitGroup) (pumps []pumpFile) {
	for i, kind := range [2]streamKind{kindStdout, kindStderr} {
		readers.Add(1)
		if s, err := watchStream(p, kind, fds[i], readers.Done); err == nil {
			p.quiet = append(p.quiet, s)
			continue
		}
		f := os.NewFile(uintptr(fds[i]), "|0")
		p.readers = append(p.readers, f)
		pumps = append(pumps, pumpFile{f, kind})
	}
	return pumps
}

// armStop makes the end event stop waiting for output pipes once the leader
// has exited (at once if it already has). Output the leader writes while it
// handles the signal is still delivered.
func (p *proc) armStop() {
	p.stopArmed.Store(true)
	select {
	case <-p.leaderExited:
		p.stopReading()
	default:
	}
}

// pump copies one output stream into the hub until EOF. A PTY master
// reports EIO once every slave fd is closed; that counts as EOF.
//
// An idle stream holds no buffer: a read buffer is taken from a pool only
// once the poller says the pipe has data, so a thousand quiet processes
// (an SDK's background commands) cost no read buffers at all. A fast
// stream keeps reading 64 KiB at a time, as envd reads 32 KiB: larger
// reads became larger events for E2B's SDK, which then streamed slower
// and cost the daemon more memory (BENCHMARKS.md, the SDK part).
func (p *proc) pump(f *os.File, kind streamKind, wg *sync.WaitGroup) {
	defer wg.Done()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	for {
		buf, n, err := readWhenReady(rc)
		if n > 0 {
			publishRead(p.out, kind, (*buf)[:n])
		}
		if buf != nil {
			readBufs.Put(buf)
		}
		if err != nil {
			return
		}
	}
}

// readBufs holds the pumps' read buffers.
var readBufs = sync.Pool{New: func() any {
	b := make([]byte, readBufSize)
	return &b
}}

// readWhenReady reads once from a pollable descriptor, waiting in the
// runtime's poller (not in a thread) until it has data, into a buffer it
// takes from readBufs only then; the caller puts it back. End of file is
// io.EOF.
func readWhenReady(rc syscall.RawConn) (buf *[]byte, n int, err error) {
	werr := rc.Read(func(fd uintptr) bool {
		if buf == nil {
			buf = readBufs.Get().(*[]byte)
		}
		for {
			n, err = unix.Read(int(fd), *buf)
			if err != unix.EINTR {
				break
			}
		}
		if err == unix.EAGAIN {
			readBufs.Put(buf)
			buf = nil
			return false
		}
		return true
	})
	switch {
	case werr != nil:
		return buf, 0, werr
	case err != nil:
		return buf, 0, err
	case n == 0:
		return buf, 0, io.EOF
	}
	return buf, n, nil
}

// supervise waits for the leader and the output readers, then publishes the
// end event and retires the process.
func (p *proc) supervise(readers *sync.WaitGroup, onExit func(*proc)) {
	ws, waitErr := p.wait()
	p.exitedAt = time.Now()
	if waitErr == nil {
		p.status, p.hasState = ws, true
		if !ws.Exited() || ws.ExitStatus() != 0 {
			// What os/exec's Wait returned, which envd passes on.
			waitErr = errors.New(exitText(ws))
		}
	}
	close(p.leaderExited)
	if p.stopArmed.Load() {
		p.stopReading()
	}
	readers.Wait()
	p.stopReading()
	p.stdinMu.Lock()
	if p.stdin != nil {
		_ = p.stdin.Close()
		p.stdin = nil
	}
	p.stdinMu.Unlock()
	p.out.close(p.endEvent(waitErr))
	p.readers, p.quiet = nil, nil
	close(p.done)
	onExit(p)
}

// endEvent renders exit facts the way envd does: exit_code -1 and a
// status like "signal: killed" for a signal, "exit status 3" otherwise, and
// the Wait error (if any) as error.
func (p *proc) endEvent(waitErr error) *process.ProcessEvent_EndEvent {
	ev := &process.ProcessEvent_EndEvent{ExitCode: -1}
	if ws, ok := p.waitStatus(); ok {
		if ws.Exited() {
			ev.ExitCode, ev.Exited = int32(ws.ExitStatus()), true
		}
		ev.Status = exitText(ws)
	}
	if waitErr != nil {
		msg := waitErr.Error()
		ev.Error = &msg
	}
	return ev
}

// exitText says how a process ended as os/exec's ProcessState does:
// "exit status 3", "signal: killed", with " (core dumped)" after a dump.
func exitText(ws syscall.WaitStatus) string {
	var s string
	switch {
	case ws.Exited():
		s = "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		s = "signal: " + ws.Signal().String()
	}
	if ws.CoreDump() {
		s += " (core dumped)"
	}
	return s
}

// waitStatus returns the raw wait status of an exited process.
func (p *proc) waitStatus() (syscall.WaitStatus, bool) {
	return p.status, p.hasState
}

// exited reports whether the end event has been published.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// writeInput writes to the PTY master or the stdin pipe. Writes are
// serialized so concurrent callers never interleave within one message.
func (p *proc) writeInput(data []byte, toPTY bool) error {
	if toPTY && p.pty == nil {
		return errNotPTY
	}
	if !toPTY && p.pty != nil {
		return errIsPTY
	}
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	f := p.pty
	if f == nil {
		if p.stdin == nil {
			return errStdinClosed
		}
		f = p.stdin
	}
	_ = f.SetWriteDeadline(time.Time{}) // clear an earlier interrupt
	_, err := f.Write(data)
	return err
}

// interruptInput unblocks a write stuck on a process that does not read its
// input. It does not take stdinMu: the stuck writer holds it.
func (p *proc) interruptInput() {
	if f := p.inputFile; f != nil {
		_ = f.SetWriteDeadline(time.Unix(1, 0))
	}
}

func (p *proc) closeStdin() error {
	if p.pty != nil {
		return errIsPTY
	}
	p.stdinMu.Lock()
	defer p.stdinMu.Unlock()
	if p.stdin == nil {
		return errStdinClosed
	}
	err := p.stdin.Close()
	p.stdin = nil
	return err
}

var (
	errNotPTY      = errors.New("has no terminal; send stdin input instead of pty input")
	errIsPTY       = errors.New("runs on a terminal; send pty input (Ctrl-D, 0x04, for end of input)")
	errStdinClosed = errors.New("stdin not enabled or closed")
)

// size returns the PTY size.
func (p *proc) size() (cols, rows uint16, err error) {
	if p.pty == nil {
		return 0, 0, errNotPTY
	}
	return getWinsize(p.pty)
}
