package seam

import (
	"slices"
	"strings"
	"testing"

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
	members := []ProcessView{
		{Pid: 10, Ppid: 1, Argv: leader},
		{Pid: 11, Ppid: 10, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/dev/fd/63"}},
		{Pid: 12, Ppid: 11, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{Pid: 13, Ppid: 10, Argv: []string{"bash", "-c", "sleep 1 | sleep 2"}},
		{Pid: 14, Ppid: 13, Argv: []string{"sleep", "1"}},
		{Pid: 15, Ppid: 99, Argv: []string{"/usr/bin/tee", "orphan-of-the-program"}},
	}
	cmd := markWrapperMembers(10, members)
	if strings.Join(cmd, " ") != "bash -c sleep 1 | sleep 2" {
		t.Fatalf("command %q", cmd)
	}
	want := map[int]bool{10: true, 11: true, 12: true}
	for _, m := range members {
		if m.Wrapper != want[m.Pid] {
			t.Errorf("pid %d wrapper=%v, want %v", m.Pid, m.Wrapper, want[m.Pid])
		}
	}

	// Once the leader has exited, its fork, tee and head are orphans of the
	// daemon; they used to be counted as the program's.
	gone := []ProcessView{
		{Pid: 20, Ppid: 1, Argv: leader}, // a fork of the leader
		{Pid: 21, Ppid: 20, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/dev/fd/63"}},
		{Pid: 22, Ppid: 21, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{Pid: 23, Ppid: 1, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/x"}},
		{Pid: 24, Ppid: 23, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{Pid: 25, Ppid: 1, Argv: []string{"sleep", "1"}},
		{Pid: 26, Ppid: 25, Argv: []string{"sleep", "2"}},
	}
	markWrapperMembers(10, gone)
	for _, m := range gone {
		if m.Wrapper != (m.Pid < 25) {
			t.Errorf("leader gone: pid %d %v wrapper=%v", m.Pid, m.Argv, m.Wrapper)
		}
	}
}

// A group whose leader has exited and whose members' argv is unknown (a
// zombie, a kernel thread, an unreadable cmdline) has no wrapper script to
// abbreviate.
func TestWrapperMembersWithoutLeaderOrArgv(t *testing.T) {
	members := []ProcessView{{Pid: 31, Ppid: 1, State: "Z"}, {Pid: 32, Ppid: 31, Argv: []string{"sleep", "1"}}}
	if argv := markWrapperMembers(30, members); argv != nil {
		t.Fatalf("requested argv %q from a group without a wrapper", argv)
	}
	for _, m := range members {
		if m.Wrapper || (m.Pid == 31 && m.Argv != nil) {
			t.Fatalf("member %+v changed", m)
		}
	}
}
