package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// BenchmarkListGroups is one full group snapshot (what WatchGroups takes
// every second for each watcher) with SANDTOP_BENCH_GROUPS (default 100)
// idle groups, each a sleep under its own shim.
func BenchmarkListGroups(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("SANDTOP_BENCH_GROUPS")); err == nil && v > 0 {
		n = v
	}
	env := daemontest.Start(b, daemon.Config{})
	ctx := context.Background()
	for i := 0; i < n; i++ {
		req := connect.NewRequest(startReq("sleep", "100000"))
		req.Header().Set(daemon.SessionDirHeader, filepath.Join(env.RuntimeRoot, "processes", fmt.Sprintf("g%d", i)))
		s, err := env.Client.Process.Start(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if !s.Receive() {
			b.Fatal(s.Err())
		}
		_ = s.Close()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := env.Client.Supervisor.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{}))
		if err != nil || len(res.Msg.GetGroups()) < n {
			b.Fatalf("%d groups, %v", len(res.Msg.GetGroups()), err)
		}
	}
}
