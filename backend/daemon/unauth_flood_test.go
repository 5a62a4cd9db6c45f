package daemon_test

import (
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
)

// h2Preface is what an HTTP/2 client sends first: the magic, then its
// (here empty) SETTINGS frame.
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// 1,100 connections that send the HTTP/2 preface and no token do not
// starve an authorised client: it still lists processes within 2 s, and
// the idle connections are closed once the auth timeout passes. Before,
// each was kept for the 640 s idle timeout: with the test's file limit
// sized as a daemon's would be, the daemon ran out of descriptors and the
// authorised call failed.
func TestTokenlessConnectionFloodDoesNotStarveAuthorisedClient(t *testing.T) {
	const flood = 1100
	const authTimeout = 3 * time.Second
	// Room for the flood's own ends of the connections, and a few hundred
	// more: not for the daemon to keep another 1,100.
	limitFiles(t, flood+400)
	env := daemontest.StartTCP(t, daemon.Config{Token: "tok", AuthTimeout: authTimeout})
	addr := strings.TrimPrefix(env.Addr, "http://")

	conns := make([]net.Conn, 0, flood)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	began := time.Now()
	for range flood {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("after %d connections: %v", len(conns), err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte(h2Preface)); err != nil {
			// The daemon may already have pushed it out.
			continue
		}
	}
	t.Logf("%d preface-only connections opened in %s", flood, time.Since(began).Round(time.Millisecond))

	start := time.Now()
	_, err := env.Dial().Process.List(ctxFor(t, 2*time.Second), connect.NewRequest(&process.ListRequest{}))
	if err != nil {
		t.Fatalf("authorised List under the flood: %v", err)
	}
	t.Logf("authorised List answered in %s", time.Since(start).Round(time.Millisecond))

	// Every flood connection is closed by the daemon: pushed out by newer
	// ones, or at the auth timeout.
	deadline := time.Now().Add(authTimeout + 5*time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := 0
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(deadline)
			buf := make([]byte, 4096)
			for {
				_, err := c.Read(buf)
				if err == nil {
					continue // the daemon's SETTINGS, its GOAWAY
				}
				if errors.Is(err, os.ErrDeadlineExceeded) {
					mu.Lock()
					open++
					mu.Unlock()
				}
				return
			}
		}()
	}
	wg.Wait()
	if open > 0 {
		t.Errorf("%d of %d preface-only connections were still open %s after the flood", open, flood, time.Since(began).Round(time.Millisecond))
	}
}

// limitFiles lowers this process's soft limit on open files to n for the
// test (the daemon under test shares it), and restores it after.
func limitFiles(t *testing.T, n uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if old.Cur < n {
		t.Skipf("the soft file limit is %d, below the %d this test needs", old.Cur, n)
	}
	lim := old
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// A connection that authenticated is never closed by the auth timeout: a
// stream that outlives it runs to its end.
func TestAuthTimeoutSparesAuthenticatedStreams(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Token: "tok", AuthTimeout: 200 * time.Millisecond})
	r := run(t, env.Dial(), startReq("sh", "-c", "sleep 1; echo still here"))
	if got := r.stdout.String(); got != "still here\n" {
		t.Fatalf("stdout %q", got)
	}
}

// A client that has only asked /health, with the token, keeps its
// connection past the auth timeout; one without the token does not.
func TestHealthWithTheTokenAuthenticatesTheConnection(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Token: "tok", AuthTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(env.Addr, "http://")
	probe := func(token string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		req := "GET /health HTTP/1.1\r\nHost: x\r\n"
		if token != "" {
			req += "X-Access-Token: " + token + "\r\n"
		}
		if _, err := c.Write([]byte(req + "\r\n")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		if n, err := c.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 204") {
			t.Fatalf("health: %q %v", buf[:n], err)
		}
		return c
	}
	with, without := probe("tok"), probe("")
	time.Sleep(time.Second) // three auth timeouts
	for name, c := range map[string]net.Conn{"with the token": with, "without": without} {
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		closed := err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
		if want := name == "without"; closed != want {
			t.Errorf("health %s: connection closed %v, want %v (%v)", name, closed, want, err)
		}
	}
}
