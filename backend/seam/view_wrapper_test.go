package seam

import (
	"slices"
	"strings"
	"testing"

	"sandtop/sandbox"
	"sandtop/wrapper"
)

func TestWrapperArgvFindsTheRequestedCommand(t *testing.T) {
	params := []string{"/bin/bash", "--noprofile", "--norc", "-c", "SCRIPT", "sandtop-wrapper", "/state", "ignore", "1", "1", "0022",
		"/usr/bin/env", "/usr/bin/tee", "/usr/bin/head", "/usr/bin/rm"}
	requested := []string{"--", "bash", "-c", "sleep 1 | sleep 2"}
	for name, leader := range map[string][]string{
		"current": slices.Concat(params, []string{"/usr/bin/stdbuf"}, requested),
		"older":   slices.Concat(params, requested),
	} {
		t.Run(name, func(t *testing.T) { checkWrapperMembers(t, leader) })
	}
	if _, _, ok := wrapper.Inner(params); ok {
		t.Fatal("a wrapper argv without \"--\" was accepted")
	}
}

func checkWrapperMembers(t *testing.T, leader []string) {
	members := []sandbox.Process{
		{PID: 10, PPID: 1, Argv: leader},
		{PID: 11, PPID: 10, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/dev/fd/63"}},
		{PID: 12, PPID: 11, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{PID: 13, PPID: 10, Argv: []string{"bash", "-c", "sleep 1 | sleep 2"}},
		{PID: 14, PPID: 13, Argv: []string{"sleep", "1"}},
		{PID: 15, PPID: 99, Argv: []string{"/usr/bin/tee", "orphan-of-the-program"}},
	}
	cmd := markWrapperMembers(10, members)
	if strings.Join(cmd, " ") != "bash -c sleep 1 | sleep 2" {
		t.Fatalf("command %q", cmd)
	}
	want := map[int]bool{10: true, 11: true, 12: true}
	for _, m := range members {
		if m.Wrapper != want[m.PID] {
			t.Errorf("pid %d wrapper=%v, want %v", m.PID, m.Wrapper, want[m.PID])
		}
	}

	// Once the leader has exited, its fork, tee and head are orphans of the
	// daemon; they used to be counted as the program's.
	gone := []sandbox.Process{
		{PID: 20, PPID: 1, Argv: leader}, // a fork of the leader
		{PID: 21, PPID: 20, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/dev/fd/63"}},
		{PID: 22, PPID: 21, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{PID: 23, PPID: 1, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/x"}},
		{PID: 24, PPID: 23, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{PID: 25, PPID: 1, Argv: []string{"sleep", "1"}},
		{PID: 26, PPID: 25, Argv: []string{"sleep", "2"}},
	}
	markWrapperMembers(10, gone)
	for _, m := range gone {
		if m.Wrapper != (m.PID < 25) {
			t.Errorf("leader gone: pid %d %v wrapper=%v", m.PID, m.Argv, m.Wrapper)
		}
	}
}

// A group whose leader has exited and whose members' argv is unknown (a
// zombie, a kernel thread, an unreadable cmdline) has no wrapper script to
// abbreviate.
func TestWrapperMembersWithoutLeaderOrArgv(t *testing.T) {
	members := []sandbox.Process{{PID: 31, PPID: 1, State: "Z"}, {PID: 32, PPID: 31, Argv: []string{"sleep", "1"}}}
	if argv := markWrapperMembers(30, members); argv != nil {
		t.Fatalf("requested argv %q from a group without a wrapper", argv)
	}
	for _, m := range members {
		if m.Wrapper || (m.PID == 31 && m.Argv != nil) {
			t.Fatalf("member %+v changed", m)
		}
	}
}
