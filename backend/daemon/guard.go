package daemon

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
)

const (
	// MaxRequestBytes bounds one request message, after decompression. The
	// largest legitimate ones are a 256 KiB stdin chunk and a Start whose
	// argv the kernel would refuse beyond 2 MiB anyway.
	MaxRequestBytes = 4 << 20
	// rejectDrainBytes and rejectDrainTime bound how much of a refused
	// request's body is read before the 401 goes out: reading it lets an h2c
	// client finish its half of the stream, so it sees the answer instead of
	// a stream reset.
	rejectDrainBytes = 1 << 20
	rejectDrainTime  = time.Second
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
// /files may carry a signature made with it (checkSignature, signed.go).
func (d *Daemon) Guard(next http.Handler) http.Handler {
	timeout := d.cfg.WriteTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /health stays open, as in envd, so clients can tell "down" from
		// "denied"; only a request that would pass ends its connection's
		// probation (see unauth.go).
		msg := d.refusal(r)
		switch {
		case msg == "":
			markAuthenticated(r.Context())
		case msg == errNoToken && r.Method == http.MethodPost && r.URL.Path == "/init":
			// postInit checks the body's token (and marks the connection).
		case msg == errNoToken && r.URL.Path == "/files" && (isFilesRead(r) || r.Method == http.MethodPost):
			if err := d.checkSignature(r); err != nil {
				filesReject(w, r, err.Error())
				return
			}
			markAuthenticated(r.Context())
		case r.URL.Path != "/health":
			if r.URL.Path == "/files" {
				filesReject(w, r, msg)
			} else {
				reject(w, r, msg)
			}
			return
		}
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, progress: &writeProgress{}}
		defer dw.disarm()
		next.ServeHTTP(dw, r.WithContext(context.WithValue(r.Context(), progressKey{}, dw.progress)))
	})
}

// errNoToken is refusal's answer to a request with no X-Access-Token at all
// on a daemon that has a token.
const errNoToken = "missing X-Access-Token"

func isFilesRead(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/files"
}

// refusal says why r may not go on, or "" when it may.
func (d *Daemon) refusal(r *http.Request) string {
	if h, ok := r.Header["Authorization"]; ok {
		if len(h) != 1 {
			return "more than one Authorization header"
		}
		if _, err := parseBasicUser(h[0]); err != nil {
			return err.Error()
		}
	}
	if token := d.defaults.currentToken(); token != "" {
		h := r.Header.Values(tokenHeader)
		if len(h) == 0 || h[0] == "" {
			return errNoToken
		}
		got, want := sha256.Sum256([]byte(h[0])), sha256.Sum256([]byte(token))
		if len(h) != 1 || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return "invalid X-Access-Token"
		}
	} else if p, ok := r.Context().Value(peerKey{}).(peer); ok && p.err != nil {
		// A tokenless TCP listener serves only the daemon's own user.
		return p.err.Error()
	}
	return ""
}

// reject answers 401 in Connect's JSON error form, which gRPC and gRPC-Web
// clients also read as Unauthenticated from the HTTP status. It first reads
// (a bounded part of) the body.
func reject(w http.ResponseWriter, r *http.Request, msg string) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(rejectDrainTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, rejectDrainBytes))
	body, _ := json.Marshal(map[string]string{"code": "unauthenticated", "message": msg})
	w.Header().Set("Content-Type", "application/json")
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close") // the body may not be fully read
	}
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body)
}

// parseBasicUser reads envd's "Authorization: Basic base64(user:)". The
// header only picks a Unix user (it is not a password check), but one that
// cannot be read must not fall back to the daemon's own user.
func parseBasicUser(header string) (string, error) {
	scheme, cred, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return "", errors.New(`malformed Authorization header: want "Basic base64(user:)"`)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", errors.New("malformed Authorization header: the credentials are not base64")
	}
	name, _, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", errors.New(`malformed Authorization header: the credentials have no ":"`)
	}
	if strings.ContainsAny(name, "\x00/\n") || len(name) > 256 {
		return "", errors.New("malformed Authorization header: the user name is not valid")
	}
	return name, nil
}

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
}

// progressKey holds a request's *writeProgress in its context.
type progressKey struct{}

// writePiece is how much of a write goes to the client between two notes
// of progress.
const writePiece = 64 << 10

func (w *deadlineWriter) arm() {
	// Re-arming costs a message to the h2 connection's loop; doing it once a
	// quarter of the timeout keeps at least 3/4 of it for any write.
	if now := time.Now(); now.Sub(w.armedAt) > w.timeout/4 {
		w.armedAt = now
		_ = w.rc.SetWriteDeadline(now.Add(w.timeout))
	}
}

func (w *deadlineWriter) disarm() {
	if !w.armedAt.IsZero() {
		w.armedAt = time.Time{}
		_ = w.rc.SetWriteDeadline(time.Time{})
	}
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
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
	w.arm()
	_ = w.rc.Flush()
	w.disarm()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// peerKey holds, in a connection's context, who is at the other end of a
// tokenless TCP connection.
type peerKey struct{}

type peer struct {
	uid uint32
	err error // set when the peer may not use the daemon
}

// connContext records the peer's user for a TCP listener without a token.
func (d *Daemon) connContext(ctx context.Context, c net.Conn) context.Context {
	if d.cfg.Token != "" {
		return ctx // a daemon started with a token keeps one (see checkInitToken)
	}
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return ctx
	}
	uid, err := tcpPeerUID(local, remote)
	switch {
	case err != nil:
		err = fmt.Errorf("this daemon has no token and serves only its own user; the connection's user is unknown (%v)", err)
	case uid != d.self.uid:
		err = fmt.Errorf("this daemon has no token and serves only its own user (uid %d); the connection comes from uid %d", d.self.uid, uid)
	}
	return context.WithValue(ctx, peerKey{}, peer{uid: uid, err: err})
}

// clipLen is how much of a client's string an error message quotes.
const clipLen = 200

// clip shortens a client-supplied string for an error message, so a huge
// path or name is not echoed back whole.
func clip(s string) string {
	if len(s) <= clipLen {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", strings.ToValidUTF8(s[:clipLen], ""), len(s))
}

// bare drops the path an *fs.PathError carries, for messages that already
// quote it clipped.
func bare(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
