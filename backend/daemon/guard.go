package daemon

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"sandtop/backend/daemon/auth"
	"sandtop/backend/daemon/transport"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/safetext"
	"time"

	"connectrpc.com/connect"
)

const (
	// MaxRequestBytes bounds one request message, after decompression. The
	// largest legitimate ones are a 256 KiB stdin chunk and a Start whose
	// argv the kernel would refuse beyond 2 MiB anyway.
	MaxRequestBytes = 4 << 20
	// defaultWriteTimeout bounds one write to a client: a stream whose client
	// stops reading is ended instead of holding its goroutine for ever.
	defaultWriteTimeout = 15 * time.Second
)

// HandlerOptions are the options every Connect handler of the daemon is
// built with: the request size limit, a gzip that stops inflating at that
// limit, no compression of small answers, and JSON that writes output
// events without a copy (eventJSON). A new service gets the same
// bounds with mux.Handle(xconnect.NewXHandler(svc, d.HandlerOptions()...)).
func (d *Daemon) HandlerOptions() []connect.HandlerOption {
	opts := []connect.HandlerOption{
		connect.WithCompressMinBytes(compressMinBytes),
		connect.WithReadMaxBytes(MaxRequestBytes),
		connect.WithCompression("gzip",
			func() connect.Decompressor { return &boundedGzip{limit: MaxRequestBytes} },
			func() connect.Compressor { return gzip.NewWriter(nil) }),
	}
	for _, c := range eventJSONCodecs {
		opts = append(opts, connect.WithCodec(c))
	}
	return opts
}

// boundedGzip inflates at most limit+1 bytes per message and then fails, so
// a small compressed body cannot make the daemon inflate gigabytes, not
// even to discard them.
type boundedGzip struct {
	gz    gzip.Reader
	limit int64
	n     int64
}

var errInflateLimit = fmt.Errorf("gzip body inflates beyond %d bytes", MaxRequestBytes)

func (b *boundedGzip) Read(p []byte) (int, error) {
	if b.n > b.limit {
		return 0, errInflateLimit
	}
	n, err := b.gz.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *boundedGzip) Reset(r io.Reader) error {
	b.n = 0
	return b.gz.Reset(r)
}

func (b *boundedGzip) Close() error { return b.gz.Close() }

// Guard wraps a handler with the checks every route of the daemon gets,
// whatever its protocol: the access token (when one is set), the peer's
// user on a tokenless TCP listener, well-formed Authorization headers, and
// a write deadline. buildHandler applies it to the whole mux, so a handler
// added there is covered; Guard is exported for handlers served elsewhere.
// Two routes take envd's other proofs of the token instead of the header:
// POST /init carries it in its body (postInit checks it), and GET/POST
// /files may carry a signature made with it (auth.CheckFileSignature).
// A request that passes ends its connection's probation
// (transport.Probation).
func (d *Daemon) Guard(next http.Handler) http.Handler {
	timeout := d.cfg.WriteTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /health stays open, as in envd, so clients can tell "down" from
		// "denied"; only a request that would pass ends its connection's
		// probation.
		err := d.refusal(r)
		switch {
		case err == nil:
			transport.Authenticated(r.Context())
		case errors.Is(err, auth.ErrNoToken) && r.Method == http.MethodPost && r.URL.Path == "/init":
			// postInit checks the body's token (and marks the connection).
		case errors.Is(err, auth.ErrNoToken) && r.URL.Path == "/files" && (isFilesRead(r) || r.Method == http.MethodPost):
			if err := auth.CheckFileSignature(r, d.defaults.currentToken()); err != nil {
				auth.RejectFiles(w, r, err.Error())
				return
			}
			transport.Authenticated(r.Context())
		case r.URL.Path != "/health":
			if r.URL.Path == "/files" {
				auth.RejectFiles(w, r, err.Error())
			} else {
				auth.Reject(w, r, err.Error())
			}
			return
		}
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, progress: &writeProgress{}}
		defer dw.disarm()
		ctx := context.WithValue(r.Context(), progressKey{}, dw.progress)
		if r.URL.Path == processconnect.ProcessStartProcedure || r.URL.Path == processconnect.ProcessConnectProcedure {
			if pk := parkableRequest(r, dw); pk != nil {
				ctx = context.WithValue(ctx, parkKey{}, pk)
			}
		}
		next.ServeHTTP(dw, r.WithContext(ctx))
	})
}

func isFilesRead(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/files"
}

// refusal says why r may not go on, or nil when it may.
func (d *Daemon) refusal(r *http.Request) error {
	if h, ok := r.Header["Authorization"]; ok {
		if len(h) != 1 {
			return errors.New("more than one Authorization header")
		}
		if _, err := auth.ParseBasicUser(h[0]); err != nil {
			return err
		}
	}
	if token := d.defaults.currentToken(); token != "" {
		return auth.CheckToken(r.Header, token)
	}
	// A tokenless TCP listener serves only the daemon's own user.
	return transport.PeerRefusal(r.Context())
}

// parseBasicUser is auth.ParseBasicUser under the name the process
// service calls it by.
func parseBasicUser(header string) (string, error) { return auth.ParseBasicUser(header) }

// deadlineWriter puts a deadline on every write to the client and lifts it
// once the write is done, so an idle stream is never cut but one whose
// client stopped reading gives up after timeout.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	armedAt time.Time
	// progress notes each piece the client took, so the output hub can
	// tell a client that reads a large message slowly from one that
	// stopped reading.
	progress *writeProgress
	// hijacked: a parked stream has taken the connection (see park), and
	// what Connect still writes when its handler returns goes nowhere.
	hijacked bool
}

// hijack takes the connection from net/http for a parked stream.
func (w *deadlineWriter) hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := w.rc.Hijack()
	if err == nil {
		w.hijacked = true
	}
	return c, brw, err
}

// progressKey holds a request's *writeProgress in its context.
type progressKey struct{}

// writePiece is how much of a write goes to the client between two notes
// of progress.
const writePiece = 64 << 10

func (w *deadlineWriter) arm() {
	if w.hijacked {
		return
	}
	// Re-arming costs a message to the h2 connection's loop; doing it once a
	// quarter of the timeout keeps at least 3/4 of it for any write.
	if now := time.Now(); now.Sub(w.armedAt) > w.timeout/4 {
		w.armedAt = now
		_ = w.rc.SetWriteDeadline(now.Add(w.timeout))
	}
}

func (w *deadlineWriter) disarm() {
	if w.hijacked {
		return
	}
	if !w.armedAt.IsZero() {
		w.armedAt = time.Time{}
		_ = w.rc.SetWriteDeadline(time.Time{})
	}
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	if w.hijacked {
		return len(b), nil
	}
	w.arm()
	n := 0
	for len(b) > 0 {
		piece := b[:min(len(b), writePiece)]
		m, err := w.ResponseWriter.Write(piece)
		n += m
		if err != nil {
			return n, err
		}
		w.progress.note()
		b = b[m:]
	}
	return n, nil
}

// Flush ends every message Connect sends on a stream, so the deadline is
// lifted here until the next one.
func (w *deadlineWriter) Flush() {
	if w.hijacked {
		return
	}
	w.arm()
	_ = w.rc.Flush()
	w.disarm()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// connContext records the peer's user for a TCP listener without a token.
func (d *Daemon) connContext(ctx context.Context, c net.Conn) context.Context {
	if d.cfg.Token != "" {
		return ctx // a daemon started with a token keeps one (see checkInitToken)
	}
	return transport.OwnUserOnly(ctx, c, d.self.uid)
}

// clip shortens a client-supplied string for an error message.
func clip(s string) string { return safetext.Quoted(s) }

// bare drops the path an *fs.PathError carries, for messages that already
// quote it clipped.
func bare(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
