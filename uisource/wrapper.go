package uisource

import (
	"sandtop/ui"
	"sandtop/wrapper"
)

// Every seam spawn on stock envd runs through sandtop's wrapper: the
// daemon starts an outer bash, which carries the output stream, and that
// starts an inner bash that leads the user's new session and group. The
// table shows one row per spawn: the inner group, with the user's argv and
// the outer pid (the one whose output can be streamed).

func leaderOf(g *ui.Group) *ui.Process {
	for i := range g.Members {
		if g.Members[i].PID == g.PGID {
			return &g.Members[i]
		}
	}
	return nil
}

// foldWrappers hides the outer halves' groups and gives each inner group
// the user's argv, its state dir and the outer pid as its leader pid. The
// state dir of each folded group is returned by pgid.
func foldWrappers(groups []ui.Group, shims map[int]shimGroup) (kept []ui.Group, stateDirs map[int]string) {
	outerPid := map[string]int{}
	hidden := map[int]bool{}
	for _, g := range groups {
		for _, p := range g.Members {
			dir, ok := wrapper.Outer(p.Argv)
			if !ok {
				continue
			}
			// The outer half's pid is the one the daemon started; its
			// group is plumbing only when it leads it (a daemon that does
			// not give each process its own group shares one with others).
			outerPid[dir] = p.PID
			if p.PID == g.PGID {
				hidden[g.PGID] = true
			}
		}
	}
	stateDirs = map[int]string{}
	for _, g := range groups {
		if hidden[g.PGID] {
			continue
		}
		if l := leaderOf(&g); l != nil {
			if dir, argv, ok := wrapper.Inner(l.Argv); ok {
				g.Argv = argv
				stateDirs[g.PGID] = dir
				if pid := outerPid[dir]; pid != 0 {
					g.LeaderPID = pid
				}
			} else if sh, ok := shims[g.PGID]; ok && g.Argv == nil {
				// No wrapper: sandtop's daemon runs it under a shim and
				// names its state directory.
				g.Argv = sh.argv
				stateDirs[g.PGID] = sh.stateDir
			}
		}
		kept = append(kept, g)
	}
	return kept, stateDirs
}
