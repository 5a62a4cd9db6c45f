package shim_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
	"sandtop/backend/shim"
)

// This test binary never calls shim.RunIfSubcommand (no TestMain), as a
// binary that forgot to would not: started as a shim it would run its own
// tests again. The daemon refuses to start one, saying what is missing.
func TestDaemonRefusesShimsFromABinaryWithoutTheEntry(t *testing.T) {
	if shim.Entered() {
		t.Fatal("this test binary must not call shim.RunIfSubcommand")
	}
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := false
	req := connect.NewRequest(&process.StartRequest{Process: &process.ProcessConfig{Cmd: "true"}, Stdin: &f})
	req.Header().Set(daemon.SessionDirHeader, filepath.Join(env.RuntimeRoot, "processes", "p1"))
	s, err := env.Client.Process.Start(ctx, req)
	if err == nil {
		for s.Receive() {
			if start := s.Msg().GetEvent().GetStart(); start != nil {
				t.Fatalf("started pid %d under a shim this binary cannot be", start.GetPid())
			}
		}
		err = s.Err()
		_ = s.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "shim.RunIfSubcommand") {
		t.Fatalf("start: %v, want the missing shim.RunIfSubcommand named", err)
	}
}
