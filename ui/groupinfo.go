package ui

import (
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/safetext"
	"sandtop/sandbox"
)

// command is what a group runs, as the list shows it: its command line,
// else its tag.
func command(g *sandbox.Group) string {
	if c := g.CommandLine(); c != "" {
		return safetext.Line(c) // argv comes from the sandbox
	}
	return safetext.Line(g.Tag)
}

// argvString is argv as the UI shows it (quoted where a word needs it), or
// [comm] when the argv is unknown.
func argvString(argv []string, comm string) string {
	p := sandbox.Process{Argv: argv, Comm: comm}
	return safetext.Line(p.CommandLine()) // argv comes from the sandbox
}

// liveCount says how many of g's processes run: its members, and the
// escapees that keep it live when there are any.
func liveCount(g *sandbox.Group, member string) string {
	s := count(g.LiveMembers(), member)
	if n := len(g.Escapees); n > 0 {
		s += ", " + count(n, "escapee")
	}
	return s
}

func groupCPU(g *sandbox.Group) float64 {
	var s float64
	for _, p := range g.Members {
		s += p.CPUPercent
	}
	return s
}

func groupRSS(g *sandbox.Group) uint64 {
	var s uint64
	for _, p := range g.Members {
		s += p.RSSBytes
	}
	return s
}

func groupTTY(g *sandbox.Group) string {
	for _, p := range g.Members {
		if p.TTY != "" {
			return p.TTY
		}
	}
	return ""
}

func groupStarted(g *sandbox.Group) time.Time {
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

func exitString(e *sandbox.Exit) string {
	if e == nil {
		return "-"
	}
	if e.Signal != "" {
		// KILL, TERM, SEGV: the names operators know, where the column fits them.
		if name := strings.TrimPrefix(e.Signal, "SIG"); name != "" && len(name) <= 4 {
			return name
		}
		if n := unix.SignalNum(e.Signal); n != 0 {
			return fmt.Sprintf("sig%d", n)
		}
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
