package envd_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
)

// protoLog records which protocol each request arrived over.
type protoLog struct {
	mu     sync.Mutex
	protos map[string]int
}

func (p *protoLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.protos[r.Proto+" "+r.URL.Path]++
		p.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (p *protoLog) count(proto string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.protos[proto]
}

// echo runs `echo hi` through Start and returns its stdout.
func echo(t *testing.T, c *envd.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.Process.Start(ctx, connect.NewRequest(&process.StartRequest{Process: &process.ProcessConfig{Cmd: "echo", Args: []string{"hi"}}}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out string
	for s.Receive() {
		out += string(s.Msg().GetEvent().GetData().GetStdout())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// An http:// endpoint that speaks only HTTP/1.1, as stock envd does, works
// with no option; one that speaks h2c gets h2c. Each is decided once.
func TestHTTPEndpointNegotiatesProtocol(t *testing.T) {
	d, err := daemon.New(daemon.Config{RuntimeRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	log := &protoLog{protos: map[string]int{}}
	h := log.wrap(d.Handler())

	t.Run("HTTP/1.1 only", func(t *testing.T) {
		srv := httptest.NewServer(h) // no h2c: the stock envd situation
		defer srv.Close()
		c, err := envd.Dial(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := 0; i < 2; i++ {
			if got := echo(t, c); got != "hi\n" {
				t.Fatalf("stdout %q", got)
			}
		}
		if n := log.count("HTTP/1.1 " + processconnect.ProcessStartProcedure); n != 2 {
			t.Errorf("%d starts over HTTP/1.1, want 2", n)
		}
		if n := log.count("HTTP/1.1 /health"); n != 1 {
			t.Errorf("%d HTTP/1.1 probes, want 1 (the answer is remembered)", n)
		}
	})
	t.Run("h2c", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(h)
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		srv.Config.Protocols = &p
		srv.Start()
		defer srv.Close()
		c, err := envd.Dial(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i := 0; i < 2; i++ {
			if got := echo(t, c); got != "hi\n" {
				t.Fatalf("stdout %q", got)
			}
		}
		if n := log.count("HTTP/2.0 " + processconnect.ProcessStartProcedure); n != 2 {
			t.Errorf("%d starts over h2c, want 2", n)
		}
		if n := log.count("HTTP/2.0 /health"); n != 1 {
			t.Errorf("%d h2c probes, want 1 (the answer is remembered)", n)
		}
	})
}
