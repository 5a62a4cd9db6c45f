package daemon_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
)

func TestTokenRequiredWhenConfigured(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Token: "s3cret"})
	for name, opts := range map[string][]envd.Option{
		"missing":     nil,
		"wrong":       {envd.WithToken("guess")},
		"wrong-http1": {envd.WithToken("guess"), envd.WithHTTP1(), envd.WithJSON()},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := envd.Dial(env.Addr, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Process.List(ctxFor(t, 5*time.Second), connect.NewRequest(&process.ListRequest{}))
			if connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("List: want unauthenticated, got %v", err)
			}
			s, err := c.Process.Start(ctxFor(t, 5*time.Second), connect.NewRequest(startReq("true")))
			if err == nil {
				_, err = drainStart(s)
			}
			if connect.CodeOf(err) != connect.CodeUnauthenticated {
				t.Errorf("Start: want unauthenticated, got %v", err)
			}
			if err := c.Health(ctxFor(t, 5*time.Second)); err != nil {
				t.Errorf("health should stay open: %v", err)
			}
		})
	}
	// The right token works (env.Client carries it).
	run(t, env.Client, startReq("true"))
}

func TestTokenEnforcedOnUnixSocketToo(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{Token: "tok"})
	c, err := envd.Dial(env.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Process.List(ctxFor(t, 5*time.Second), connect.NewRequest(&process.ListRequest{}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("want unauthenticated, got %v", err)
	}
}

func TestListenRules(t *testing.T) {
	if _, err := daemon.Listen("0.0.0.0:0", ""); err == nil || !strings.Contains(err.Error(), "a token is required") {
		t.Errorf("non-loopback without token: %v", err)
	}
	if _, err := daemon.Listen(":0", ""); err == nil {
		t.Errorf("all-interfaces without token was accepted")
	}
	l, err := daemon.Listen("0.0.0.0:0", "tok")
	if err != nil {
		t.Errorf("non-loopback with token: %v", err)
	} else {
		l.Close()
	}
	l, err = daemon.Listen("127.0.0.1:0", "")
	if err != nil {
		t.Errorf("loopback without token: %v", err)
	} else {
		l.Close()
	}

	open := t.TempDir()
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.Listen("unix:"+filepath.Join(open, "s.sock"), ""); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("socket in a 0755 dir without token: %v", err)
	}
	l, err = daemon.Listen("unix:"+filepath.Join(open, "s.sock"), "tok")
	if err != nil {
		t.Errorf("socket in a 0755 dir with token: %v", err)
	} else {
		l.Close()
	}
}

func TestHealthOverPlainHTTP(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	res, err := http.Get(env.Addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Errorf("health status %d", res.StatusCode)
	}
}
