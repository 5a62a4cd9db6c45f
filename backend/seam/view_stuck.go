package seam

import (
	"slices"
	"time"

	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/stuck"
)

// stuckRecheck is how often a watch judges its groups again although the
// table did not change: being idle is a matter of time passing.
const stuckRecheck = 15 * time.Second

// judgeStuck sets each live group's Stuck reason under rules (nil: the
// defaults) and says whether any changed. It never writes to a Groups
// slice already handed out: on a change the snapshot gets its own copy.
// CPU is only trusted from the extension (stock envd's ps gives a
// lifetime average, not what the group does now).
func judgeStuck(s *sandbox.Snapshot, rules *stuck.Rules, cpuKnown bool, now time.Time) bool {
	r := stuck.Default()
	if rules != nil {
		r = *rules
	}
	waiting := map[int]bool{}
	for _, t := range s.Terminals {
		if t.InputWaiting && t.ForegroundPGID > 1 {
			waiting[t.ForegroundPGID] = true
		}
	}
	copied := false
	for i := range s.Groups {
		g := &s.Groups[i]
		why := ""
		if g.State.Live() {
			f := stuck.Facts{WaitingInput: waiting[g.PGID], LeaderGone: g.State == groupstate.LeaderExited,
				CPUKnown: cpuKnown, QuietSince: g.OutputAt}
			for _, m := range g.Members {
				if !m.Wrapper {
					f.CPU += m.CPUPercent
				}
			}
			why = r.Judge(f, now)
		}
		if why == g.Stuck {
			continue
		}
		if !copied {
			s.Groups = slices.Clone(s.Groups)
			g = &s.Groups[i]
			copied = true
		}
		g.Stuck = why
	}
	return copied
}
