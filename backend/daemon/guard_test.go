package daemon_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"runtime"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// protocolClients are the ways a client may speak to the daemon: the three
// RPC protocols, over h2c and over HTTP/1.1 (gRPC needs HTTP/2).
func protocolClients(t *testing.T, env *daemontest.Env, header http.Header) map[string]processconnect.ProcessClient {
	t.Helper()
	h2c := &http.Transport{}
	var p2 http.Protocols
	p2.SetUnencryptedHTTP2(true)
	h2c.Protocols = &p2
	h1 := &http.Transport{}
	t.Cleanup(h2c.CloseIdleConnections)
	t.Cleanup(h1.CloseIdleConnections)
	set := connect.WithInterceptors(headerSetter(header))
	out := map[string]processconnect.ProcessClient{}
	for name, tr := range map[string]*http.Transport{"h2c": h2c, "http1": h1} {
		hc := &http.Client{Transport: tr}
		out["connect-"+name] = processconnect.NewProcessClient(hc, env.Addr, set)
		out["grpcweb-"+name] = processconnect.NewProcessClient(hc, env.Addr, set, connect.WithGRPCWeb())
		if name == "h2c" {
			out["grpc-"+name] = processconnect.NewProcessClient(hc, env.Addr, set, connect.WithGRPC())
		}
	}
	return out
}

type headerSetter http.Header

func (h headerSetter) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		for k, v := range h {
			req.Header()[k] = v
		}
		return next(ctx, req)
	}
}

func (h headerSetter) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		for k, v := range h {
			conn.RequestHeader()[k] = v
		}
		return conn
	}
}

func (h headerSetter) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// A malformed Authorization header used to fall back to the daemon's own
// user; now it is refused on every protocol and transport.
func TestMalformedBasicAuthIsRefusedEverywhere(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	b64 := base64.StdEncoding.EncodeToString
	for _, bad := range []string{
		"Basic !!!not-base64",
		"Basic " + b64([]byte("root")), // no colon
		"Bearer abc",
		"Basic",
		"Basic " + b64([]byte("a/b:")),
	} {
		for name, c := range protocolClients(t, env, http.Header{"Authorization": {bad}}) {
			t.Run(name+"/"+bad, func(t *testing.T) {
				s, err := c.Start(ctxFor(t, 10*time.Second), connect.NewRequest(startReq("id", "-u")))
				if err == nil {
					var r *result
					r, err = drainStart(s)
					if r != nil && r.stdout.Len() > 0 {
						t.Fatalf("the command ran: %q", r.stdout.String())
					}
				}
				wantCode(t, err, connect.CodeUnauthenticated, "")
				_, err = c.List(ctxFor(t, 10*time.Second), connect.NewRequest(&process.ListRequest{}))
				wantCode(t, err, connect.CodeUnauthenticated, "")
			})
		}
	}
	// The answer says what was wrong.
	req, _ := http.NewRequest(http.MethodPost, env.Addr+processconnect.ProcessListProcedure, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Basic !!!")
	if status, body := doHTTP(t, http.DefaultClient, req); status != http.StatusUnauthorized || !strings.Contains(body, "the credentials are not base64") {
		t.Errorf("malformed Basic: status %d body %q", status, body)
	}
	// A well-formed header for the daemon's own user still works everywhere.
	for name, c := range protocolClients(t, env, http.Header{"Authorization": {"Basic " + b64([]byte(currentUser(t)+":"))}}) {
		if _, err := c.List(ctxFor(t, 10*time.Second), connect.NewRequest(&process.ListRequest{})); err != nil {
			t.Errorf("%s: well-formed Basic: %v", name, err)
		}
	}
}

func currentUser(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// Unauthenticated h2c requests with a body used to end, now and then, in a
// stream reset instead of the 401; the daemon now reads the body first.
func TestUnauthenticatedH2CWithBodyGetsA401(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Token: "tok"})
	tr := &http.Transport{}
	var p2 http.Protocols
	p2.SetUnencryptedHTTP2(true)
	tr.Protocols = &p2
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	body := bytes.Repeat([]byte(`{"process":{"cmd":"true"}}`), 20<<10) // about 500 KiB, beyond the flow-control window
	for i := range 40 {
		req, err := http.NewRequestWithContext(ctxFor(t, 10*time.Second), http.MethodPost,
			env.Addr+processconnect.ProcessListProcedure, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || !bytes.Contains(got, []byte(`"unauthenticated"`)) {
			t.Fatalf("request %d: status %d body %q", i, res.StatusCode, got)
		}
	}
}

// dialAs opens a TCP connection owned by uid: the kernel gives a socket the
// creator's filesystem uid, which setfsuid changes for this thread only.
func dialAs(t *testing.T, uid int, addr string) net.Conn {
	t.Helper()
	ap, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, _ := unix.SetfsuidRetUid(uid)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if now, _ := unix.SetfsuidRetUid(prev); now != uid {
		panic(fmt.Sprintf("setfsuid(%d) did not take (fsuid %d)", uid, now))
	}
	if err != nil {
		t.Fatal(err)
	}
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	if err := unix.Connect(fd, sa); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "tcp")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clientAs is an envd client whose connections belong to uid.
func clientAs(t *testing.T, env *daemontest.Env, uid int, opts ...envd.Option) *envd.Client {
	t.Helper()
	host := strings.TrimPrefix(env.Addr, "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialAs(t, uid, host), nil
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := envd.Dial(env.Addr, append(opts, envd.WithHTTPClient(&http.Client{Transport: tr}))...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Loopback TCP without a token used to give any local user the daemon's
// user; now only the daemon's own user gets through.
func TestTokenlessTCPServesOnlyTheDaemonsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to open a socket as another user")
	}
	const nobody = 65534
	env := daemontest.StartTCP(t, daemon.Config{})
	other := clientAs(t, env, nobody)
	s, err := other.Process.Start(ctxFor(t, 10*time.Second), connect.NewRequest(startReq("id", "-u")))
	if err == nil {
		var r *result
		r, err = drainStart(s)
		if r != nil && r.stdout.Len() > 0 {
			t.Fatalf("uid %d ran a command as %q", nobody, r.stdout.String())
		}
	}
	wantCode(t, err, connect.CodeUnauthenticated, "")
	_, err = other.Supervisor.ListGroups(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.ListGroupsRequest{}))
	wantCode(t, err, connect.CodeUnauthenticated, "")
	host := strings.TrimPrefix(env.Addr, "http://")
	raw := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialAs(t, nobody, host), nil
	}}}
	req, _ := http.NewRequest(http.MethodPost, env.Addr+processconnect.ProcessListProcedure, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	if status, body := doHTTP(t, raw, req); status != http.StatusUnauthorized || !strings.Contains(body, "the connection comes from uid 65534") {
		t.Errorf("nobody: status %d body %q", status, body)
	}

	// The daemon's own user, through the same kind of socket, is served.
	self := clientAs(t, env, os.Geteuid(), envd.WithHTTP1())
	if r := run(t, self, startReq("id", "-u")); strings.TrimSpace(r.stdout.String()) != fmt.Sprint(os.Geteuid()) {
		t.Errorf("own user: id -u printed %q", r.stdout.String())
	}

	// With a token, the token decides, whoever connects.
	withTok := daemontest.StartTCP(t, daemon.Config{Token: "tok"})
	if r := run(t, clientAs(t, withTok, nobody, envd.WithToken("tok")), startReq("true")); r.end.GetExitCode() != 0 {
		t.Errorf("token holder as nobody: exit %d", r.end.GetExitCode())
	}
}

// A small gzip body that inflates past the limit is refused without being
// inflated, and a huge field is refused by size; neither grows the daemon.
func TestRequestSizeIsBounded(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	rssBefore := selfRSS(t)

	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	_, _ = zw.Write([]byte(`{"path":"`))
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range 64 { // inflates to 64 MiB, 16 times the limit
		_, _ = zw.Write(chunk)
	}
	_, _ = zw.Write([]byte(`"}`))
	_ = zw.Close()
	req, _ := http.NewRequestWithContext(ctxFor(t, 30*time.Second), http.MethodPost,
		env.Addr+"/sandtop.v1.Supervisor/ReadFile", bytes.NewReader(bomb.Bytes()))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	status, body := doHTTP(t, http.DefaultClient, req)
	if status == http.StatusOK || !strings.Contains(body, "resource_exhausted") {
		t.Errorf("gzip bomb (%d bytes): status %d body %q", bomb.Len(), status, body)
	}

	// A 5 MiB path, uncompressed: refused by size.
	_, err := env.Client.Supervisor.ReadFile(ctxFor(t, 60*time.Second), connect.NewRequest(&sandtopv1.ReadFileRequest{Path: strings.Repeat("p", 5<<20)}))
	wantCode(t, err, connect.CodeResourceExhausted, "larger than configured max")
	// Just under the limit, the message is accepted and the error quotes
	// only the start of the path.
	_, err = env.Client.Supervisor.ReadFile(ctxFor(t, 60*time.Second), connect.NewRequest(&sandtopv1.ReadFileRequest{Path: "/" + strings.Repeat("p", 1<<20)}))
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("long path: error of %d bytes: %.200s", len(fmt.Sprint(err)), err)
	}
	if grew := selfRSS(t) - rssBefore; grew > 256<<20 {
		t.Errorf("the test process (daemon included) grew by %d MiB", grew>>20)
	}
}

// selfRSS is this process's resident set size in bytes.
func selfRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	var size, rss int64
	fmt.Sscan(string(b), &size, &rss)
	return rss * int64(os.Getpagesize())
}

func doHTTP(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	res, err := c.Do(req.WithContext(ctxFor(t, 10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
