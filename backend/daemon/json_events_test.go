package daemon_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
)

// A client that speaks Connect's JSON (E2B's SDKs) gets a fast stream in
// data events of at most 64 KiB, every byte of it: larger events cost
// the daemon several copies each while protojson encodes them, and the
// SDK's decoder more time, than envd's 32 KiB ones.
func TestJSONClientsGetBoundedDataEvents(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	c := env.Dial(envd.WithJSON(), envd.WithHTTP1())
	const total = 32 << 20
	s, err := c.Process.Start(ctxFor(t, 60*time.Second), connect.NewRequest(startReq("head", "-c", "33554432", "/dev/zero")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, largest, events := 0, 0, 0
	for s.Receive() {
		if b := s.Msg().GetEvent().GetData().GetStdout(); len(b) > 0 {
			got += len(b)
			largest = max(largest, len(b))
			events++
		}
		if events == 1 {
			// Fall behind once, so that output piles up in the daemon
			// and one read could carry a lot of it.
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got != total {
		t.Fatalf("got %d bytes of %d", got, total)
	}
	if largest > 64<<10 {
		t.Errorf("largest data event %d bytes, want at most %d", largest, 64<<10)
	}
	t.Logf("%d bytes in %d events, the largest %d", got, events, largest)
}
