package uisource

import (
	"strings"

	"sandtop/ui"
)

// The origin rule, for every live group (first match wins):
//
//  1. led by a wrapper whose state dir lies under sandtop's runtime root:
//     sandtop; under any other root (a DeepSeek Harness agent's
//     <cwd>/.dsh-e2b): agent;
//  2. listed by the agent's published state (DiscoverAgent): agent;
//  3. tagged "sandtop…" by the daemon (a sandtop terminal's own group):
//     sandtop;
//  4. in the session of a sandtop terminal, i.e. a job typed into a shell
//     sandtop manages (top, a build): sandtop;
//  5. anything else: other — another client of the daemon, or a process
//     not started through it at all.
func markOrigins(groups []ui.Group, stateDirs map[int]string, root string, agentPgids map[int]bool, sandtopSessions map[int]bool) {
	for i := range groups {
		g := &groups[i]
		g.Origin = originOf(g, stateDirs[g.PGID], root, agentPgids, sandtopSessions)
	}
}

func originOf(g *ui.Group, stateDir, root string, agentPgids, sandtopSessions map[int]bool) ui.Origin {
	if stateDir != "" {
		if root != "" && strings.HasPrefix(stateDir, root+"/") {
			return ui.OriginSandtop
		}
		return ui.OriginAgent
	}
	switch {
	case agentPgids[g.PGID]:
		return ui.OriginAgent
	case strings.HasPrefix(g.Tag, "sandtop"):
		return ui.OriginSandtop
	case g.SID > 1 && sandtopSessions[g.SID]:
		return ui.OriginSandtop
	}
	return ui.OriginForeign
}

// sandtopSessions are the sessions led by terminals sandtop manages (their
// tag says so; a terminal's runner leads its session, so sid == pid).
func sandtopSessions(terms []ui.Terminal) map[int]bool {
	m := map[int]bool{}
	for _, t := range terms {
		if strings.HasPrefix(t.Tag, "sandtop") {
			sid := t.SID
			if sid == 0 {
				sid = t.PID
			}
			m[sid] = true
		}
	}
	return m
}
