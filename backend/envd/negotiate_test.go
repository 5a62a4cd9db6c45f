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
	cases := []struct {
		name, proto string
		h2c         bool
	}{
		{"HTTP/1.1 only", "HTTP/1.1", false}, // the stock envd situation
		{"h2c", "HTTP/2.0", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := &protoLog{protos: map[string]int{}}
			srv := httptest.NewUnstartedServer(log.wrap(d.Handler()))
			if tc.h2c {
				var p http.Protocols
				p.SetHTTP1(true)
				p.SetUnencryptedHTTP2(true)
				srv.Config.Protocols = &p
			}
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
				if _, err := c.Process.List(t.Context(), connect.NewRequest(&process.ListRequest{})); err != nil {
					t.Fatal(err)
				}
			}
			// The output streams take HTTP/1.1, which every envd speaks;
			// the other calls what the endpoint answered.
			if n := log.count("HTTP/1.1 " + processconnect.ProcessStartProcedure); n != 2 {
				t.Errorf("%d starts over HTTP/1.1, want 2", n)
			}
			if n := log.count(tc.proto + " " + processconnect.ProcessListProcedure); n != 2 {
				t.Errorf("%d lists over %s, want 2", n, tc.proto)
			}
			if n := log.count(tc.proto + " /health"); n != 1 {
				t.Errorf("%d %s probes, want 1 (the answer is remembered)", n, tc.proto)
			}
		})
	}
}
