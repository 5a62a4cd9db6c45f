package transport

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"time"
)

// A connection costs a file descriptor from the moment it is accepted, and
// an HTTP/2 connection that has sent only its preface would be kept for the
// whole idle timeout. So until a connection has carried one request that
// passed the daemon's checks (a valid token, or the right user where no
// token is set; the daemon says so with Authenticated) it is on probation:
// it is closed once its timeout (DefaultAuthTimeout) passes without one,
// and each peer address may hold at most maxUnauthPerPeer such connections
// (maxUnauthTotal in all); a new one beyond that pushes out that peer's (or
// everyone's) oldest. An authorised client's connection authenticates with
// its first request, in a moment, and from then on nothing here touches it:
// no deadline is set on any read or write, so long streams (logs -f, attach,
// watches) run for as long as they like.
const (
	// DefaultAuthTimeout is how long a new connection has to authenticate.
	DefaultAuthTimeout = 10 * time.Second
	maxUnauthPerPeer   = 64
	maxUnauthTotal     = 512
)

// connGate keeps the connections of one listener that have not yet
// authenticated, oldest first.
type connGate struct {
	timeout time.Duration
	mu      sync.Mutex
	unauth  []*gatedConn // in order of arrival
	perPeer map[string]int
}

type gatedConn struct {
	net.Conn
	g      *connGate
	peer   string
	timer  *time.Timer
	authed bool // under g.mu
	gone   bool // under g.mu: closed, expired or pushed out
}

// gateListener applies a connGate to l's connections.
type gateListener struct {
	net.Listener
	g *connGate
}

// Probation puts every connection l accepts on probation until a request
// on it is Authenticated (see above). The server must put ConnContext in
// each connection's context, or no connection ever leaves probation.
func Probation(l net.Listener, timeout time.Duration) net.Listener {
	return &gateListener{Listener: l, g: &connGate{timeout: timeout, perPeer: make(map[string]int)}}
}

func (l *gateListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.g.admit(c), nil
}

// peerOf is the address a cap applies to: the IP for TCP, one for all
// local (unix socket) peers.
func peerOf(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return "local"
}

func (g *connGate) admit(c net.Conn) *gatedConn {
	gc := &gatedConn{Conn: c, g: g, peer: peerOf(c)}
	var out []*gatedConn
	g.mu.Lock()
	if g.perPeer[gc.peer] >= maxUnauthPerPeer {
		for _, o := range g.unauth {
			if o.peer == gc.peer {
				out = append(out, o)
				break
			}
		}
	} else if len(g.unauth) >= maxUnauthTotal {
		out = append(out, g.unauth[0])
	}
	for _, o := range out {
		g.dropLocked(o)
	}
	g.unauth = append(g.unauth, gc)
	g.perPeer[gc.peer]++
	gc.timer = time.AfterFunc(g.timeout, gc.expire)
	g.mu.Unlock()
	for _, o := range out {
		o.timer.Stop()
		_ = o.Conn.Close()
	}
	return gc
}

// dropLocked takes c off probation's list. Called with g.mu held.
func (g *connGate) dropLocked(c *gatedConn) {
	if c.gone || c.authed {
		return
	}
	c.gone = true
	for i, o := range g.unauth {
		if o == c {
			g.unauth = append(g.unauth[:i], g.unauth[i+1:]...)
			break
		}
	}
	if g.perPeer[c.peer]--; g.perPeer[c.peer] <= 0 {
		delete(g.perPeer, c.peer)
	}
}

// authenticated ends c's probation: a request on it passed.
func (c *gatedConn) authenticated() {
	g := c.g
	g.mu.Lock()
	if c.authed || c.gone {
		g.mu.Unlock()
		return
	}
	g.dropLocked(c)
	c.gone = false
	c.authed = true
	g.mu.Unlock()
	c.timer.Stop()
}

// expire closes c if it has not authenticated by now.
func (c *gatedConn) expire() {
	c.g.mu.Lock()
	if c.authed || c.gone {
		c.g.mu.Unlock()
		return
	}
	c.g.dropLocked(c)
	c.g.mu.Unlock()
	_ = c.Conn.Close()
}

func (c *gatedConn) Close() error {
	c.g.mu.Lock()
	c.g.dropLocked(c)
	c.g.mu.Unlock()
	c.timer.Stop()
	return c.Conn.Close()
}

// NetConn is the connection under the probation, as tls.Conn has one.
func (c *gatedConn) NetConn() net.Conn { return c.Conn }

// ReadFrom keeps the connection's own (sendfile, splice) for HTTP/1.1
// bodies such as /files downloads.
func (c *gatedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// gateKey holds a request's *gatedConn in its connection's context.
type gateKey struct{}

// ConnContext records the connection in its context (http.Server's
// ConnContext), so that Authenticated can end its probation.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if gc, ok := c.(*gatedConn); ok {
		return context.WithValue(ctx, gateKey{}, gc)
	}
	return ctx
}

// Authenticated ends the probation of the connection a request came on;
// ctx is the request's.
func Authenticated(ctx context.Context) {
	if gc, ok := ctx.Value(gateKey{}).(*gatedConn); ok {
		gc.authenticated()
	}
}
