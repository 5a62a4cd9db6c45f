package cli

import (
	"path"
	"slices"
)

// The seam runs every program under its bash wrapper, so a group's leader
// and a few helpers (process-substitution subshells, tee and head for
// spills) are the wrapper's, not the operator's. ls shows the requested
// command and counts only the operator's processes.
//
// The inner half's argv is: bash --noprofile --norc -c SCRIPT
// sandtop-wrapper STATE STDIN OUT_CAP ERR_CAP UMASK ENV TEE HEAD RM STDBUF --
// ARGV... (wrappers started before STDBUF was added end at RM). The direct
// form keeps the layout with TAG for UMASK and "-" for the tools.

const wrapperMarker = "sandtop-wrapper"

// wrapperArgvMarker stands for the wrapper's script in a member's argv.
const wrapperArgvMarker = "<sandtop wrapper>"

// wrapperArgv recognises the wrapper's inner half (or direct form) and
// returns the argv it runs.
func wrapperArgv(argv []string) (requested []string, ok bool) {
	i := slices.Index(argv, wrapperMarker)
	if i < 1 {
		return nil, false
	}
	// The parameters are a path, numbers, a tag and absolute paths or "-":
	// the first "--" after them starts the requested argv.
	end := slices.Index(argv[i:], "--")
	if end < 10 || i+end+1 >= len(argv) {
		return nil, false
	}
	return argv[i+end+1:], true
}

// markWrapperMembers sets Wrapper on the wrapper's own processes and
// returns the requested argv, when the group's leader is a wrapper. The
// wrapper's processes are the leader, its forks (same argv), and the spill
// helpers: tee children of the leader with the wrapper's flag, and their
// descendants (head). Everything else, orphans included, is the program's.
// With the leader gone, its forks and tees are still recognised.
func markWrapperMembers(pgid int, members []listProcess) []string {
	var leader *listProcess
	for i := range members {
		if members[i].PID == pgid {
			leader = &members[i]
		}
	}
	var requested []string
	if leader != nil {
		var ok bool
		if requested, ok = wrapperArgv(leader.Argv); !ok {
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
		_, ok := wrapperArgv(argv)
		return ok
	}
	isWrapper := map[int]bool{}
	for i := range members {
		m := members[i]
		switch {
		case m.PID == pgid, isFork(m.Argv):
			isWrapper[m.PID] = true
		case (m.PPID == pgid || leader == nil) && len(m.Argv) > 1 && path.Base(m.Argv[0]) == "tee" && m.Argv[1] == "--output-error=warn-nopipe":
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
		if slices.Equal(members[i].Argv, script) {
			members[i].Argv = []string{path.Base(script[0]), wrapperArgvMarker}
		}
	}
	return requested
}
