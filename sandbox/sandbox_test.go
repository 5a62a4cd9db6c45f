package sandbox

import (
	"testing"

	"sandtop/groupstate"
)

func TestGroupReadings(t *testing.T) {
	g := Group{PGID: 10, State: groupstate.LeaderExited,
		Members:  []Process{{PID: 11, State: "S", Argv: []string{"sleep", "1"}}, {PID: 12, State: "Z", Comm: "sh"}},
		Escapees: []Process{{PID: 20, State: "S", Argv: []string{"sleep", "2"}}}}
	if !g.Live() || g.Leader() != nil || g.LiveMembers() != 1 || g.Command() != nil || g.CommandLine() != "sleep 1" {
		t.Fatalf("leaderless group: live %v, leader %v, %d live members, command %q, line %q",
			g.Live(), g.Leader(), g.LiveMembers(), g.Command(), g.CommandLine())
	}
	g.Members = append(g.Members, Process{PID: 10, State: "R", Argv: []string{"bash", "-c", "a b", ""}})
	if l := g.Leader(); l == nil || l.PID != 10 || g.CommandLine() != `bash -c "a b" ""` || len(g.Command()) != 4 {
		t.Fatalf("leader %v, line %q", l, g.CommandLine())
	}
	g.Argv = []string{"make", "$TARGET"}
	if g.CommandLine() != `make "$TARGET"` || g.Command()[0] != "make" {
		t.Fatalf("requested argv not preferred: %q", g.CommandLine())
	}
	g.State = groupstate.Settled
	if g.Live() {
		t.Fatal("a settled group is live")
	}
	if p := (Process{Comm: "kworker/0:1"}); p.CommandLine() != "[kworker/0:1]" {
		t.Fatalf("argv-less process: %q", p.CommandLine())
	}
	if (&Group{}).CommandLine() != "" {
		t.Fatal("an empty group has a command line")
	}
}
