package uisource

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/gen/process"
	"sandtop/sandbox"
)

// A job typed into a sandtop terminal is sandtop's; a group another client
// of the daemon started is "other".
func TestSourceOriginTerminalJobsAndOtherClients(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			t.Parallel()
			src, env := newTestSource(t, daemon.Config{Compat: compat}, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			watch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}

			// Another client starts a process straight through the daemon, in
			// a group of its own (a plain start has none, as under envd).
			other, err := env.Dial().Process.Start(ctx, connect.NewRequest(&process.StartRequest{
				Process: &process.ProcessConfig{Cmd: "setsid", Args: []string{"sleep", "37"}}}))
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if !other.Receive() {
				t.Fatalf("start: %v", other.Err())
			}
			otherPid := int(other.Msg().GetEvent().GetStart().GetPid())

			// A job-control shell in a sandtop terminal runs a job in its own group.
			pid, err := src.SpawnTerminal(ctx, []string{"bash", "--norc", "--noprofile", "-i"}, 24, 80)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := src.Attach(ctx, pid)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("sleep 31\r")); err != nil {
				t.Fatal(err)
			}
			leaderIs := func(g *sandbox.Group, argv ...string) bool {
				l := leaderOf(g)
				return l != nil && slices.Equal(l.Argv, argv)
			}
			nextSnapshotWhere(t, watch, "the terminal's job as sandtop's and the other client's as other", func(s sandbox.Snapshot) bool {
				var job, foreign *sandbox.Group
				for i := range s.Groups {
					g := &s.Groups[i]
					switch {
					case leaderIs(g, "sleep", "31"):
						job = g
					case g.PGID == otherPid || leaderIs(g, "sleep", "37"):
						foreign = g
					}
				}
				return job != nil && job.Origin == sandbox.OriginSandtop && job.SID == pid && job.PGID != pid &&
					foreign != nil && foreign.Origin == sandbox.OriginOther
			})
		})
	}
}

func leaderOf(g *sandbox.Group) *sandbox.Process {
	for i := range g.Members {
		if g.Members[i].PID == g.PGID {
			return &g.Members[i]
		}
	}
	return nil
}
