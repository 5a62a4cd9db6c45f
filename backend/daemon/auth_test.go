package daemon_test

import (
	"net/http"
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
