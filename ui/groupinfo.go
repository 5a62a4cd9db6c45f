package ui

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/groupstate"
	"sandtop/safetext"
)

// tally reads the group's members under the one liveness rule.
func tally(g *Group) groupstate.Tally {
	var t groupstate.Tally
	for _, p := range g.Members {
		t.Add(p.State, p.PID == g.PGID) // the leader's pid is the pgid
	}
	return t
}

// liveMembers are the members that still run.
func liveMembers(g *Group) int { return tally(g).Live() }

// stateOf names where g is in its life, in the vocabulary ls uses too.
func stateOf(g *Group) groupstate.State {
	if g.Settled {
		return groupstate.Settled
	}
	return tally(g).State()
}

// command is what a group runs: its leader's argv, else the first member's.
func command(g *Group) string {
	if len(g.Argv) > 0 {
		return argvString(g.Argv, "")
	}
	for _, p := range g.Members {
		if p.PID == g.PGID {
			return argvString(p.Argv, p.Comm)
		}
	}
	if len(g.Members) > 0 {
		return argvString(g.Members[0].Argv, g.Members[0].Comm)
	}
	if g.Tag != "" {
		return safetext.Line(g.Tag)
	}
	return ""
}

func argvString(argv []string, comm string) string {
	if len(argv) == 0 {
		if comm != "" {
			return "[" + safetext.Line(comm) + "]"
		}
		return ""
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$") {
			a = fmt.Sprintf("%q", a)
		}
		parts[i] = a
	}
	return safetext.Line(strings.Join(parts, " ")) // argv comes from the sandbox
}

func groupCPU(g *Group) float64 {
	var s float64
	for _, p := range g.Members {
		s += p.CPUPercent
	}
	return s
}

func groupRSS(g *Group) uint64 {
	var s uint64
	for _, p := range g.Members {
		s += p.RSSBytes
	}
	return s
}

func groupTTY(g *Group) string {
	for _, p := range g.Members {
		if p.TTY != "" {
			return p.TTY
		}
	}
	return ""
}

func groupStarted(g *Group) time.Time {
	if !g.Started.IsZero() {
		return g.Started
	}
	var t time.Time
	for _, p := range g.Members {
		if !p.Started.IsZero() && (t.IsZero() || p.Started.Before(t)) {
			t = p.Started
		}
	}
	return t
}

func exitString(e *ExitStatus) string {
	if e == nil {
		return "-"
	}
	if e.Signal != 0 {
		// KILL, TERM, SEGV: the names operators know, where the column fits them.
		if name := strings.TrimPrefix(unix.SignalName(syscall.Signal(e.Signal)), "SIG"); name != "" && len(name) <= 4 {
			return name
		}
		return fmt.Sprintf("sig%d", e.Signal)
	}
	return fmt.Sprint(e.Code)
}

// formatAge is a compact age: 45s, 12m, 3h, 2d.
func formatAge(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// formatBytes is a compact size: 512K, 14M, 1.2G.
func formatBytes(b uint64) string {
	switch {
	case b == 0:
		return "-"
	case b < 1<<20:
		return fmt.Sprintf("%dK", (b+1023)>>10)
	case b < 1<<30:
		return fmt.Sprintf("%dM", b>>20)
	}
	return fmt.Sprintf("%.1fG", float64(b)/(1<<30))
}
