package daemon

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"sandtop/backend/gen/process"
)

// A process stream over HTTP/1.1 (E2B's SDKs speak it) holds its
// connection for as long as its process runs, and net/http gives each
// such connection two goroutines: the one in the handler, blocked until
// the process writes, and a reader watching for the client's hang-up.
// A thousand background commands held two thousand goroutines, their
// stacks and some 10 KiB of buffers each, and the Go runtime never frees
// the goroutine records and span bookkeeping such a crowd makes: the
// daemon stayed several MiB larger after the crowd had ended.
//
// So a stream with nothing to send for parkIdle is parked: the daemon
// takes its connection from net/http (Hijack) and keeps only the
// connection and a small record. What wakes it (output or the end in the process's hub,
// the keepalive timer, the client's hang-up through the quiet set, the
// daemon's shutdown) starts a goroutine that writes what there is in the
// same Connect envelopes and HTTP/1.1 chunks, then parks the stream again
// or ends it. Only Connect's protocol over HTTP/1.1, without a deadline
// of the client's, is parked: an HTTP/2 stream shares its connection and
// stays with net/http.

// parkKey holds a request's *parkable in its context.
type parkKey struct{}

// parkable is what a stream needs to be parked: the response writer to
// take the connection from and the codec of the request.
type parkable struct {
	w         *deadlineWriter
	conn      net.Conn // as the server accepted it
	appendMsg func(dst []byte, msg any) ([]byte, error)
}

// parkableRequest says whether a stream on r could be parked, and how.
func parkableRequest(r *http.Request, w *deadlineWriter) *parkable {
	if r.ProtoMajor != 1 || r.Header.Get("Connect-Timeout-Ms") != "" {
		return nil
	}
	conn, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return nil
	}
	name, ok := strings.CutPrefix(r.Header.Get("Content-Type"), "application/connect+")
	if !ok {
		return nil // gRPC and gRPC-Web end their streams otherwise
	}
	if name == "proto" {
		return &parkable{w: w, conn: conn, appendMsg: func(dst []byte, m any) ([]byte, error) {
			return proto.MarshalOptions{}.MarshalAppend(dst, m.(proto.Message))
		}}
	}
	for _, c := range eventJSONCodecs {
		if c.Name() == name {
			return &parkable{w: w, conn: conn, appendMsg: c.MarshalAppend}
		}
	}
	return nil
}

// connKey holds, in a connection's context, the connection as the
// server accepted it.
type connKey struct{}

// parkableIn is ctx's parkable, or nil.
func parkableIn(ctx context.Context) *parkable {
	pk, _ := ctx.Value(parkKey{}).(*parkable)
	return pk
}

// closeAfterResponse asks the client not to reuse a connection that may
// be parked: the daemon closes it after the stream's end, and a client
// that sent its next request on it meanwhile would see that fail.
func closeAfterResponse(ctx context.Context, h http.Header) {
	if parkableIn(ctx) != nil {
		h.Set("Connection", "close")
	}
}

// parkedStream is an idle stream whose connection the daemon holds.
type parkedStream struct {
	d         *Daemon
	sub       *subscriber
	conn      net.Conn
	fd        int // conn's socket, watched for the client's hang-up
	appendMsg func(dst []byte, msg any) ([]byte, error)
	maxEvent  int
	interval  time.Duration // between keepalives
	timeout   time.Duration // for each write
	progress  *writeProgress

	mu       sync.Mutex
	running  bool // a goroutine is writing
	again    bool // woken while one was: it looks once more
	hungUp   bool
	kaDue    bool
	finished bool
	ka       *time.Timer
	hup      *quietWatch
}

// park takes an idle stream's connection from net/http and holds it
// until wait (from sub.next) is closed, or another wake-up. It reports
// false, with nothing changed, when the connection cannot be taken; the
// caller then goes on serving the stream itself.
func (d *Daemon) park(pk *parkable, sub *subscriber, interval time.Duration, maxEvent int, wait <-chan struct{}) bool {
	fd, ok := socketFD(pk.conn)
	if !ok {
		return false
	}
	// What net/http had read ahead of the connection is dropped with its
	// reader: nothing comes from an HTTP/1.1 client while its response is
	// under way.
	conn, _, err := pk.w.hijack()
	if err != nil {
		return false
	}
	_ = conn.SetDeadline(time.Time{})
	ps := &parkedStream{d: d, sub: sub, conn: conn, fd: fd, appendMsg: pk.appendMsg,
		maxEvent: maxEvent, interval: interval, timeout: pk.w.timeout, progress: pk.w.progress}
	ps.mu.Lock()
	if !d.addParked(ps) { // shutting down: end it at once
		ps.running = true
		ps.mu.Unlock()
		go ps.run()
		return true
	}
	ps.ka = time.AfterFunc(interval, ps.keepaliveDue)
	if w, err := quiet.add(fd, ps.hangUp); err == nil {
		ps.hup = w
	}
	ps.mu.Unlock()
	// Without ps.mu: the hub runs wake under its own lock.
	sub.parkUntil(wait, ps.wake)
	return true
}

// socketFD is the descriptor of the socket under c, found through the
// connection's wrappers: a stream whose hang-up cannot be watched is not
// parked.
func socketFD(c net.Conn) (int, bool) {
	for {
		if sc, ok := c.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			if err != nil {
				return 0, false
			}
			fd := -1
			if rc.Control(func(s uintptr) { fd = int(s) }) != nil || fd < 0 {
				return 0, false
			}
			return fd, true
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return 0, false
		}
		c = u.NetConn()
	}
}

// wake starts a goroutine to write what there is, unless one is at it.
func (ps *parkedStream) wake() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.finished {
		return
	}
	if ps.running {
		ps.again = true
		return
	}
	ps.running = true
	go ps.run()
}

func (ps *parkedStream) keepaliveDue() {
	ps.mu.Lock()
	ps.kaDue = true
	ps.mu.Unlock()
	ps.wake()
}

// hangUp runs when the client's side of the connection reports: a close
// (the usual case) or, from a misbehaving client, bytes, which are left
// unread and not watched for again.
func (ps *parkedStream) hangUp() {
	ps.mu.Lock()
	if ps.finished { // the descriptor may be closed, its number reused
		ps.mu.Unlock()
		return
	}
	var b [1]byte
	n, _, err := unix.Recvfrom(ps.fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	if n > 0 || errors.Is(err, unix.EAGAIN) {
		if n == 0 && ps.hup != nil {
			_ = ps.hup.rearm()
		}
		ps.mu.Unlock()
		return
	}
	ps.hungUp = true
	ps.mu.Unlock()
	ps.wake()
}

// run writes what the stream has, then parks it again or ends it.
func (ps *parkedStream) run() {
	w := newParkedWriter(ps)
	defer w.release()
	for {
		ps.mu.Lock()
		ps.again = false
		hungUp, kaDue := ps.hungUp, ps.kaDue
		ps.kaDue = false
		ps.mu.Unlock()
		if hungUp {
			ps.finish(w, nil, false)
			return
		}
		select {
		case <-ps.d.shuttingDown():
			ps.finish(w, connect.NewError(connect.CodeUnavailable, errShuttingDown), true)
			return
		default:
		}
		wait, err := ps.drain(w)
		if err == nil && wait != nil && kaDue {
			err = w.send(&process.ProcessEvent{Event: &process.ProcessEvent_Keepalive{Keepalive: &process.ProcessEvent_KeepAlive{}}})
		}
		if err == nil {
			err = w.flush()
		}
		if err != nil {
			ps.finish(w, err, true)
			return
		}
		if wait == nil { // the end went out
			ps.finish(w, nil, true)
			return
		}
		ps.mu.Lock()
		if ps.again {
			ps.mu.Unlock()
			continue
		}
		ps.running = false
		if kaDue {
			ps.ka.Reset(ps.interval)
		}
		ps.mu.Unlock()
		// A wake-up from here on starts another run, which parks again
		// itself: parkUntil keeps one callback per subscriber.
		ps.sub.parkUntil(wait, ps.wake)
		return
	}
}

// drain sends what the hub has for the stream, and its end when that has
// come: it returns the channel to wait on, or nil once the end was sent.
func (ps *parkedStream) drain(w *parkedWriter) (<-chan struct{}, error) {
	for {
		out, final, err, wait := ps.sub.next(ps.maxEvent)
		switch {
		case err != nil:
			return nil, err
		case len(out) > 0:
			if err := sendMerged(out, ps.maxEvent, w.send); err != nil {
				return nil, err
			}
			ps.mu.Lock()
			ps.kaDue = false
			if ps.ka != nil {
				ps.ka.Reset(ps.interval)
			}
			ps.mu.Unlock()
		case final != nil:
			return nil, w.send(&process.ProcessEvent{Event: &process.ProcessEvent_End{End: final}})
		default:
			return wait, nil
		}
	}
}

// endStream is Connect's end-of-stream message.
type endStream struct {
	Error *endStreamError `json:"error,omitempty"`
}

type endStreamError struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// endStreamFlag marks Connect's end-of-stream envelope.
const endStreamFlag = 0b10

// finish ends the stream: with Connect's end-of-stream message and the
// last chunk when the client is there to read them (tell), then closes
// the connection and lets go of everything.
func (ps *parkedStream) finish(w *parkedWriter, cause error, tell bool) {
	ps.mu.Lock()
	ps.finished = true
	if ps.ka != nil {
		ps.ka.Stop()
	}
	hup := ps.hup
	ps.hup = nil
	ps.mu.Unlock()
	if hup != nil {
		hup.remove()
	}
	ps.d.removeParked(ps)
	ps.sub.unsubscribe()
	if tell && !w.broken {
		var end endStream
		if cause != nil {
			end.Error = &endStreamError{Code: connect.CodeOf(cause).String(), Message: errorMessage(cause)}
		}
		msg, _ := json.Marshal(end)
		if w.envelope(endStreamFlag, append([]byte{0, 0, 0, 0, 0}, msg...)) == nil && w.chunks.Close() == nil {
			_, _ = io.WriteString(w.bw, "\r\n") // no trailers
			_ = w.flush()
		}
	}
	_ = ps.conn.Close()
}

// errorMessage is what Connect would put in an error's message.
func errorMessage(err error) string {
	if ce, ok := errors.AsType[*connect.Error](err); ok {
		return ce.Message()
	}
	return err.Error()
}

// parkedWriter is a run's way to the client: Connect envelopes in
// HTTP/1.1 chunks, through a pooled buffer flushed once the run has
// nothing more to send. Each write to the connection has the daemon's
// write timeout, as on net/http's path (deadlineWriter).
type parkedWriter struct {
	ps     *parkedStream
	bw     *bufio.Writer
	chunks io.WriteCloser
	msg    *[]byte
	// broken: a write to the client failed, so the stream ends without
	// another.
	broken bool
}

var (
	parkedBufs = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}
	parkedMsgs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}
)

func newParkedWriter(ps *parkedStream) *parkedWriter {
	w := &parkedWriter{ps: ps, bw: parkedBufs.Get().(*bufio.Writer), msg: parkedMsgs.Get().(*[]byte)}
	w.bw.Reset(deadlined{w})
	w.chunks = httputil.NewChunkedWriter(w.bw)
	return w
}

func (w *parkedWriter) release() {
	w.bw.Reset(nil)
	parkedBufs.Put(w.bw)
	if cap(*w.msg) <= 1<<20 {
		*w.msg = (*w.msg)[:0]
		parkedMsgs.Put(w.msg)
	}
}

// send writes one event as a Connect envelope in one HTTP/1.1 chunk.
func (w *parkedWriter) send(ev *process.ProcessEvent) error {
	env, err := w.ps.appendMsg(append((*w.msg)[:0], 0, 0, 0, 0, 0), &process.StartResponse{Event: ev})
	if err != nil {
		return err
	}
	*w.msg = env
	return w.envelope(0, env)
}

// envelope writes env, whose first five bytes are left for Connect's
// envelope prefix: the flags and the length of what follows.
func (w *parkedWriter) envelope(flags byte, env []byte) error {
	env[0] = flags
	binary.BigEndian.PutUint32(env[1:5], uint32(len(env)-5))
	_, err := w.chunks.Write(env)
	return err
}

func (w *parkedWriter) flush() error { return w.bw.Flush() }

// deadlined writes to a parked stream's connection with the write timeout.
type deadlined struct{ w *parkedWriter }

func (d deadlined) Write(b []byte) (int, error) {
	ps := d.w.ps
	n := 0
	for len(b) > 0 {
		piece := b[:min(len(b), writePiece)]
		_ = ps.conn.SetWriteDeadline(time.Now().Add(ps.timeout))
		m, err := ps.conn.Write(piece)
		n += m
		if err != nil {
			d.w.broken = true
			return n, err
		}
		ps.progress.note()
		b = b[m:]
	}
	return n, nil
}

// addParked records ps for the daemon's shutdown; false when that has
// begun.
func (d *Daemon) addParked(ps *parkedStream) bool {
	d.parkedMu.Lock()
	defer d.parkedMu.Unlock()
	select {
	case <-d.done:
		return false
	default:
	}
	if d.parked == nil {
		d.parked = make(map[*parkedStream]struct{})
	}
	d.parked[ps] = struct{}{}
	return true
}

func (d *Daemon) removeParked(ps *parkedStream) {
	d.parkedMu.Lock()
	defer d.parkedMu.Unlock()
	delete(d.parked, ps)
	if len(d.parked) == 0 {
		d.parked = nil // a map keeps the room of its largest crowd
	}
}

// wakeParked ends every parked stream with Unavailable (the shutdown).
func (d *Daemon) wakeParked() {
	d.parkedMu.Lock()
	streams := make([]*parkedStream, 0, len(d.parked))
	for ps := range d.parked {
		streams = append(streams, ps)
	}
	d.parkedMu.Unlock()
	for _, ps := range streams {
		ps.wake()
	}
}

// parkedStreams counts the parked streams (for tests).
func (d *Daemon) parkedStreams() int {
	d.parkedMu.Lock()
	defer d.parkedMu.Unlock()
	return len(d.parked)
}
