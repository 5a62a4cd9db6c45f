package seam

import (
	"path"
	"slices"

	"sandtop/sandbox"
	"sandtop/wrapper"
)

// The seam runs every program under its bash wrapper, so a group's leader
// and a few helpers (process-substitution subshells, tee and head for
// spills) are the wrapper's, not the operator's. A snapshot names the
// requested command and marks the wrapper's processes.
//
// (Package wrapper recognises the wrapper's argv.)

// markWrapperMembers sets Wrapper on the wrapper's own processes and
// returns the requested argv, when the group's leader is a wrapper. The
// wrapper's processes are the leader, its forks (same argv), and the spill
// helpers: tee children of the leader with the wrapper's flag, and their
// descendants (head). Everything else, orphans included, is the program's.
// With the leader gone, its forks and tees are still recognised.
func markWrapperMembers(pgid int, members []sandbox.Process) []string {
	var leader *sandbox.Process
	for i := range members {
		if members[i].PID == pgid {
			leader = &members[i]
		}
	}
	var requested []string
	if leader != nil {
		var ok bool
		if _, requested, ok = wrapper.Inner(leader.Argv); !ok {
			return nil
		}
	}
	// Once the leader has exited its helpers are orphans: they are known by
	// their own argv (a wrapper fork, a tee with the wrapper's flag), and
	// no longer by their parent.
	isFork := func(argv []string) bool {
		if leader != nil {
			return slices.Equal(argv, leader.Argv)
		}
		_, _, ok := wrapper.Inner(argv)
		return ok
	}
	isWrapper := map[int]bool{}
	for i := range members {
		m := members[i]
		switch {
		case m.PID == pgid, isFork(m.Argv):
			isWrapper[m.PID] = true
		case (m.PPID == pgid || leader == nil) && wrapper.SpillTee(m.Argv):
			isWrapper[m.PID] = true
		}
	}
	// Descendants of a spill helper are helpers too; the table is small,
	// so repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, m := range members {
			if !isWrapper[m.PID] && m.PPID != pgid && isWrapper[m.PPID] {
				isWrapper[m.PID], changed = true, true
			}
		}
	}
	var script []string
	if leader != nil {
		script = leader.Argv
	}
	for i := range members {
		members[i].Wrapper = isWrapper[members[i].PID]
		// The wrapper's script is kilobytes, the same in every group: a
		// marker says what it is instead.
		if len(script) > 0 && slices.Equal(members[i].Argv, script) {
			members[i].Argv = []string{path.Base(script[0]), wrapper.ArgvMarker}
		}
	}
	return requested
}
