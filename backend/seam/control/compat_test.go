package control

import "testing"

func TestTerminalSessionZombieOnlyGroupIsSettled(t *testing.T) {
	rows := []ProcessEntry{
		{Pid: 40, Pgid: 40, Sid: 40, State: "S"},
		{Pid: 41, Pgid: 41, Sid: 40, State: "Z"}, // zombie-only group
		{Pid: 42, Pgid: 42, Sid: 40, State: "X"},
		{Pid: 43, Pgid: 43, Sid: 40, State: "Z"},
		{Pid: 44, Pgid: 43, Sid: 40, State: "T"}, // stopped but live
		{Pid: 50, Pgid: 50, Sid: 50, State: "R"}, // another session
	}
	got := sessionGroupsIn(rows, 40)
	if len(got) != 2 || got[0] != 40 || got[1] != 43 {
		t.Fatalf("live groups %v, want [40 43]", got)
	}
}
