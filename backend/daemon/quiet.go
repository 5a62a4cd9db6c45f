package daemon

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A plain Start's process is usually quiet: an SDK's background command
// (a server, a `sleep`) writes now and then or never. Watched the usual
// way, each of its output pipes and its pidfd holds a goroutine parked
// in the runtime's poller, and each goroutine and poller entry the
// runtime ever made stays allocated for good (it reuses them but never
// frees them). So a thousand such commands left the daemon several MiB
// larger after they all ended than before they started.
//
// Instead, one epoll set for the whole OS process watches the pipes and
// pidfds of plain Starts, and a goroutine is started only when one of
// them has something: a pipe's output (read until the pipe is empty,
// then handed back to the set) or a process's exit. A thousand quiet
// processes cost no goroutine and no poller entry of their own.
//
// The set's own descriptor sits in the runtime's poller, so its one
// goroutine waits without a thread as every other wait of the daemon
// does.
type quietSet struct {
	once sync.Once
	err  error
	epfd int

	mu      sync.Mutex
	next    int32 // the last token handed out
	watches map[int32]quietFire
}

// quietFire is what a watch runs when its descriptor reports; once: the
// watch ends as it fires (see addOnce).
type quietFire struct {
	fire func()
	fd   int
	once bool
}

// quiet is the process-wide set (see quietSet).
var quiet quietSet

// start opens the set and starts its goroutine, once per OS process.
func (q *quietSet) start() error {
	q.once.Do(func() {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			q.err = err
			return
		}
		if err := unix.SetNonblock(fd, true); err != nil {
			_ = unix.Close(fd)
			q.err = err
			return
		}
		// Non-blocking, so NewFile puts it in the runtime's poller: an
		// epoll set reads as readable while it has events to report.
		f := os.NewFile(uintptr(fd), "quiet epoll")
		rc, err := f.SyscallConn()
		if err != nil {
			_ = f.Close()
			q.err = err
			return
		}
		q.epfd = fd
		q.watches = map[int32]quietFire{}
		go q.run(rc) // rc keeps f, and so the set, open
	})
	return q.err
}

// run hands each event to its watch's fire, in a goroutine of its own.
func (q *quietSet) run(rc syscall.RawConn) {
	events := make([]unix.EpollEvent, 64)
	for {
		var n int
		var werr error
		err := rc.Read(func(fd uintptr) bool {
			n, werr = unix.EpollWait(int(fd), events, 0)
			if werr == unix.EINTR {
				n, werr = 0, nil
			}
			return n > 0 || werr != nil
		})
		if err != nil || werr != nil {
			// Nothing closes the set and its buffer is valid: this cannot
			// fail, and if it did every watched process would hang.
			panic("daemon: waiting on the quiet set: " + errors.Join(err, werr).Error())
		}
		q.mu.Lock()
		for _, ev := range events[:n] {
			w, ok := q.watches[ev.Fd]
			if !ok {
				continue
			}
			if w.once {
				q.removeLocked(ev.Fd, w.fd)
			}
			go w.fire()
		}
		q.mu.Unlock()
	}
}

// quietWatch is one descriptor in the set. It reports once (EPOLLONESHOT):
// its fire runs, and nothing more comes until rearm.
type quietWatch struct {
	q     *quietSet
	fd    int
	token int32
}

const quietEvents = unix.EPOLLIN | unix.EPOLLONESHOT

// add watches fd for input, end of file or an error; fire runs once,
// in a new goroutine, when it has any, and again after each rearm.
func (q *quietSet) add(fd int, fire func()) (*quietWatch, error) {
	return q.watch(fd, quietFire{fire: fire, fd: fd})
}

// addOnce is add for a single report, after which the watch is gone:
// the caller may close fd from fire on.
func (q *quietSet) addOnce(fd int, fire func()) error {
	_, err := q.watch(fd, quietFire{fire: fire, fd: fd, once: true})
	return err
}

func (q *quietSet) watch(fd int, f quietFire) (*quietWatch, error) {
	if err := q.start(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	// A token, not the descriptor, names the watch: an event read just
	// before a watch was removed must not fire a later watch of a reused
	// descriptor number.
	for {
		q.next++
		if q.next <= 0 {
			q.next = 1
		}
		if _, used := q.watches[q.next]; !used {
			break
		}
	}
	w := &quietWatch{q: q, fd: fd, token: q.next}
	ev := unix.EpollEvent{Events: quietEvents, Fd: w.token}
	if err := unix.EpollCtl(q.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return nil, err
	}
	q.watches[w.token] = f
	return w, nil
}

// rearm makes the watch report again (at once if fd has something now).
func (w *quietWatch) rearm() error {
	ev := unix.EpollEvent{Events: quietEvents, Fd: w.token}
	return unix.EpollCtl(w.q.epfd, unix.EPOLL_CTL_MOD, w.fd, &ev)
}

// remove ends the watch; the caller closes fd afterwards. A fire already
// under way still runs.
func (w *quietWatch) remove() {
	q := w.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.removeLocked(w.token, w.fd)
}

func (q *quietSet) removeLocked(token int32, fd int) {
	if _, ok := q.watches[token]; !ok {
		return
	}
	delete(q.watches, token)
	_ = unix.EpollCtl(q.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	if len(q.watches) == 0 {
		// A map keeps the room its largest crowd needed: a thousand
		// watches ended would keep a thousand slots. Empty, it costs
		// nothing to make again.
		q.watches = map[int32]quietFire{}
	}
}

// watching says how many descriptors the set watches (for tests).
func (q *quietSet) watching() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.watches)
}

// quietPipe is a pipe for a child's output: the read end a raw
// non-blocking descriptor for the quiet set, the write end an *os.File
// for os/exec (blocking, as a child's output is, and outside the
// runtime's poller).
func quietPipe() (r int, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return -1, nil, err
	}
	if err := unix.SetNonblock(p[0], true); err != nil {
		_, _ = unix.Close(p[0]), unix.Close(p[1])
		return -1, nil, err
	}
	return p[0], os.NewFile(uintptr(p[1]), "|1"), nil
}

// quietStream is one output pipe of a plain Start, read only when it has
// something (see quietSet).
type quietStream struct {
	p    *proc
	kind streamKind
	done func() // called once, when the pipe is closed

	mu      sync.Mutex
	fd      int // -1 once closed
	w       *quietWatch
	reading bool // a goroutine is reading fd
	cut     bool // stopReading: close it after the read under way
}

// watchStream puts read end fd of p's kind output in the quiet set; done
// is called once it was read to its end or cut (see quietStream.stop).
// On error fd is left open.
func watchStream(p *proc, kind streamKind, fd int, done func()) (*quietStream, error) {
	s := &quietStream{p: p, kind: kind, fd: fd, done: done}
	s.mu.Lock() // a fire that comes at once waits for s.w
	defer s.mu.Unlock()
	w, err := quiet.add(fd, s.ready)
	if err != nil {
		return nil, err
	}
	s.w = w
	return s, nil
}

// ready reads the pipe until it is empty, then hands it back to the set,
// or closes it at its end. Reads take a buffer only once the pipe has
// something, as pump does.
func (s *quietStream) ready() {
	s.mu.Lock()
	if s.fd < 0 {
		s.mu.Unlock()
		return
	}
	s.reading = true
	fd := s.fd
	s.mu.Unlock()
	for {
		buf := readBufs.Get().(*[]byte)
		var n int
		var err error
		for {
			n, err = unix.Read(fd, *buf)
			if err != unix.EINTR {
				break
			}
		}
		if n > 0 {
			publishRead(s.p.out, s.kind, (*buf)[:n])
		}
		readBufs.Put(buf)
		s.mu.Lock()
		switch {
		case err == unix.EAGAIN && !s.cut:
			s.reading = false
			if rerr := s.w.rearm(); rerr != nil {
				s.closeLocked()
			}
			s.mu.Unlock()
			return
		case s.cut || err != nil || n <= 0:
			// Cut, or the end (n 0: every writer closed it), or an error.
			s.closeLocked()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// stop cuts the stream: closed now, or after the read under way.
func (s *quietStream) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut = true
	if !s.reading && s.fd >= 0 {
		s.closeLocked()
	}
}

func (s *quietStream) closeLocked() {
	if s.fd < 0 {
		return
	}
	s.w.remove()
	_ = unix.Close(s.fd)
	s.fd = -1
	s.done()
}
