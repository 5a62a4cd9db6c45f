package seam

import (
	"strings"
	"time"

	"sandtop/backend/seam/terminal"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/wrapper"
)

// liveTable is one reading of the process table, grouped by pgid, before
// wrappers are folded and published state is added.
type liveTable struct {
	taken     time.Time
	groups    []sandbox.Group
	terminals []sandbox.Terminal
	// shims are the groups sandtop's daemon runs under a shim, by pgid: the
	// daemon names their state directory and requested argv.
	shims map[int]shimGroup
	// unchanged marks a reading that found the previous table again; it
	// carries nothing else.
	unchanged bool
}

// shimGroup is what the daemon tells of a shim group beyond its members.
type shimGroup struct {
	stateDir string
	argv     []string
}

// compose turns a live table and the published state into a snapshot:
// wrapper halves folded into one group, exit statuses and finished groups
// added, wrapper members marked, origins and states judged, terminals
// titled. finished bounds the finished groups (0: all). What it returns is
// what every front-end shows, unchanged.
func compose(t liveTable, pub *publishedState, root string, finished int) sandbox.Snapshot {
	groups, dirs := foldWrappers(liveOnly(t.groups), t.shims)
	nLive := len(groups)
	groups, agentPgids := pub.addPublished(groups, dirs, finished)
	sessions := sandtopSessions(t.terminals)
	for i := range groups[:nLive] {
		g := &groups[i]
		g.StateDir = dirs[g.PGID]
		g.ID = idOf(g.StateDir)
		if argv := markWrapperMembers(g.PGID, g.Members); argv != nil && g.Argv == nil {
			g.Argv = argv
		}
		g.Origin = originOf(g, root, agentPgids, sessions)
		g.State = tally(g).State()
		if g.State == groupstate.Settled {
			g.State = groupstate.LeaderExited // only escapees run: they keep it live
		}
		g.Started = oldestStart(g.Members)
	}
	for i := range groups {
		// A terminal's group carries its terminal's tag, as ls shows the
		// terminal, not the marker the daemon keeps (the origin rule has
		// read that already).
		if _, _, user, ok := terminal.ParseTag(groups[i].Tag); ok {
			groups[i].Tag = user
		}
	}
	terms := make([]sandbox.Terminal, len(t.terminals))
	for i, tm := range t.terminals {
		// The daemon knows what it started (a runner); the table knows the
		// program that runner became.
		if p := memberByPid(groups[:nLive], tm.PID); p != nil && len(p.Argv) > 0 {
			tm.Argv = p.Argv
		}
		tm.Title = terminalTitle(tm, groups[:nLive])
		terms[i] = tm
	}
	return sandbox.Snapshot{Taken: t.taken, Groups: groups, Terminals: terms}
}

// terminalTitle names a terminal by what runs in its foreground: the
// command line of that group's leader.
func terminalTitle(t sandbox.Terminal, live []sandbox.Group) string {
	for i := range live {
		if live[i].PGID == t.ForegroundPGID {
			if l := live[i].Leader(); l != nil {
				return l.CommandLine()
			}
		}
	}
	return ""
}

// foldWrappers hides the outer halves' groups (plumbing that carries the
// output stream) and gives each inner group the user's argv, its state dir
// and the outer pid as its leader pid. Every seam spawn on stock envd runs
// through the wrapper: the daemon starts the outer bash, which starts the
// inner one that leads the user's new session and group. The state dir of
// each folded group is returned by pgid.
func foldWrappers(groups []sandbox.Group, shims map[int]shimGroup) (kept []sandbox.Group, stateDirs map[int]string) {
	outerPid := map[string]int{}
	hidden := map[int]bool{}
	// supervisorOf: sandtop's standalone supervisors (stock envd) by pid,
	// with their groups' state dirs; each is the parent of its group's
	// leader, and leads a session and group of its own, plumbing as well.
	supervisorOf := map[int]string{}
	for _, g := range groups {
		for _, p := range g.Members {
			if dir, ok := wrapper.Supervised(p.Argv); ok {
				supervisorOf[p.PID] = dir
				if p.PID == g.PGID {
					hidden[g.PGID] = true
				}
				continue
			}
			dir, ok := wrapper.Outer(p.Argv)
			if !ok {
				continue
			}
			// The outer half's pid is the one the daemon started; its group
			// is plumbing only when it leads it (a daemon that does not give
			// each process its own group shares one with others).
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
		wrapped := false
		if l := g.Leader(); l != nil {
			if dir, argv, ok := wrapper.Inner(l.Argv); ok {
				wrapped = true
				g.Argv = argv
				stateDirs[g.PGID] = dir
				g.Supervisor = sandbox.SupervisorWrapper
				if pid := outerPid[dir]; pid != 0 {
					g.LeaderPID = pid
				}
			} else if dir, ok := supervisorOf[l.PPID]; ok && g.Argv == nil {
				// Stock envd started the supervisor, which started the
				// leader: the supervisor's output is the group's. The
				// argv comes from the published state (see addPublished).
				wrapped = true
				stateDirs[g.PGID] = dir
				g.LeaderPID = l.PPID
				g.Supervisor = sandbox.SupervisorStandalone
			}
		}
		if sh, ok := shims[g.PGID]; ok && !wrapped && g.Argv == nil {
			// No wrapper: sandtop's daemon runs it under a shim (or ran it,
			// for a group whose shim is gone) and names its state
			// directory, whether or not the leader still runs.
			g.Argv = sh.argv
			stateDirs[g.PGID] = sh.stateDir
			g.Supervisor = sandbox.SupervisorShim
		}
		kept = append(kept, g)
	}
	return kept, stateDirs
}

// originOf applies the origin rule to a live group (first match wins):
//
//  1. published under sandtop's runtime root: sandtop; under an agent's
//     root (a DeepSeek Harness agent's <cwd>/.dsh-e2b): agent; under any
//     other root (another client's): other;
//  2. listed by an agent's published state: agent;
//  3. tagged "sandtop…" by the daemon (a sandtop terminal's own group):
//     sandtop;
//  4. in the session of a sandtop terminal, i.e. a job typed into a shell
//     sandtop manages (top, a build): sandtop;
//  5. started by a plain Start, as sandtop's daemon says: envd;
//  6. anything else: other.
func originOf(g *sandbox.Group, root string, agentPgids, sandtopSessions map[int]bool) sandbox.Origin {
	if g.StateDir != "" {
		switch {
		case root != "" && strings.HasPrefix(g.StateDir, root+"/"):
			return sandbox.OriginSandtop
		case strings.Contains(g.StateDir, "/"+wrapper.AgentRootDir+"/"):
			return sandbox.OriginAgent
		}
		// Another runtime root: a sandtop client configured elsewhere.
		return sandbox.OriginOther
	}
	switch {
	case agentPgids[g.PGID]:
		return sandbox.OriginAgent
	case strings.HasPrefix(g.Tag, "sandtop"):
		return sandbox.OriginSandtop
	case g.SID > 1 && sandtopSessions[g.SID]:
		return sandbox.OriginSandtop
	case g.Origin == sandbox.OriginEnvd:
		return sandbox.OriginEnvd
	}
	return sandbox.OriginOther
}

// sandtopSessions are the sessions led by terminals sandtop manages (their
// tag says so; a terminal's runner leads its session, so sid == pid).
func sandtopSessions(terms []sandbox.Terminal) map[int]bool {
	m := map[int]bool{}
	for _, t := range terms {
		if t.Sandtop {
			sid := t.SID
			if sid == 0 {
				sid = t.PID
			}
			m[sid] = true
		}
	}
	return m
}

// leaderRuns says whether g's leader is a live member.
func leaderRuns(g *sandbox.Group) bool {
	if l := g.Leader(); l != nil {
		return groupstate.ProcLive(l.State)
	}
	return false
}

// memberByPid finds a live process in the groups.
func memberByPid(groups []sandbox.Group, pid int) *sandbox.Process {
	for i := range groups {
		for j := range groups[i].Members {
			if groups[i].Members[j].PID == pid {
				return &groups[i].Members[j]
			}
		}
	}
	return nil
}

// liveOnly drops the groups in which nothing runs any more: a table lists
// zombies until they are reaped, and a group of zombies is settled. Its
// published state, if any, then shows it as finished, with its exit.
func liveOnly(groups []sandbox.Group) []sandbox.Group {
	out := groups[:0:0]
	for _, g := range groups {
		if tally(&g).Live() > 0 || escapeesLive(&g) {
			out = append(out, g)
		}
	}
	return out
}

// escapeesLive says whether a process that left the group still runs.
func escapeesLive(g *sandbox.Group) bool {
	for _, e := range g.Escapees {
		if groupstate.ProcLive(e.State) {
			return true
		}
	}
	return false
}
