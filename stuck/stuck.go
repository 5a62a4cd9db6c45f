// Package stuck is the one judgement of whether a process group looks
// stuck, and why. It is named and configurable, never a guess hidden in a
// colour: a group is flagged when it waits for input on a terminal, has
// been idle (no output, under IdleCPU) for After, has been spinning (at
// least SpinCPU, no output) for After, or runs on without its leader.
// The seam applies it to every group it shows; the TUI and the CLI only
// display the reason.
package stuck

import (
	"errors"
	"fmt"
	"time"
)

// The reasons, as shown. Idle and Spinning are followed by how long.
const (
	WaitingInput = "waiting for input"
	LeaderGone   = "leader gone"
	Idle         = "idle"
	Spinning     = "spinning"
)

// Defaults of Rules.
const (
	DefaultAfter   = 10 * time.Minute
	DefaultIdleCPU = 1.0
	DefaultSpinCPU = 95.0
)

// Rules are the operator's thresholds ([stuck] in the config file).
type Rules struct {
	// After is how long a group must go without output before it counts
	// as idle or spinning.
	After time.Duration
	// IdleCPU: under this CPU percentage (the group's members summed) a
	// quiet group is idle. SpinCPU: at or above it, a quiet group spins.
	IdleCPU, SpinCPU float64
	// Off turns the judgement off: nothing is flagged.
	Off bool
}

// Default is the rules with every default.
func Default() Rules {
	return Rules{After: DefaultAfter, IdleCPU: DefaultIdleCPU, SpinCPU: DefaultSpinCPU}
}

// Check says what is wrong with r, in one readable error.
func (r Rules) Check() error {
	switch {
	case r.Off:
		return nil
	case r.After <= 0:
		return fmt.Errorf("stuck: after must be a positive duration (got %v)", r.After)
	case r.IdleCPU < 0 || r.IdleCPU > 100:
		return fmt.Errorf("stuck: idle_cpu must be a percentage from 0 to 100 (got %g)", r.IdleCPU)
	case r.SpinCPU <= 0 || r.SpinCPU > 100*1024:
		// Several busy members can exceed 100% together.
		return fmt.Errorf("stuck: spin_cpu must be a positive percentage (got %g)", r.SpinCPU)
	case r.IdleCPU >= r.SpinCPU:
		return errors.New("stuck: idle_cpu must be below spin_cpu")
	}
	return nil
}

// Facts are what is known of one live group.
type Facts struct {
	// WaitingInput: the group is a terminal's foreground group and reads
	// its stdin.
	WaitingInput bool
	// LeaderGone: the leader exited and members run on.
	LeaderGone bool
	// CPU is the members' CPU percentages summed; CPUKnown is false where
	// the daemon cannot tell (stock envd without a second reading).
	CPU      float64
	CPUKnown bool
	// QuietSince is when the group last wrote output (the newest write to
	// its spill files), zero when unknown: then idle and spinning cannot
	// be judged.
	QuietSince time.Time
}

// Judge is why the group looks stuck at now, or "" when it does not. The
// zero Rules judge by the defaults.
func (r Rules) Judge(f Facts, now time.Time) string {
	if r == (Rules{}) {
		r = Default()
	}
	if r.Off {
		return ""
	}
	switch {
	case f.WaitingInput:
		return WaitingInput
	case f.LeaderGone:
		return LeaderGone
	case f.QuietSince.IsZero() || !f.CPUKnown:
		return ""
	}
	quiet := now.Sub(f.QuietSince)
	if quiet < r.After {
		return ""
	}
	switch {
	case f.CPU < r.IdleCPU:
		return Idle + " " + Since(quiet)
	case f.CPU >= r.SpinCPU:
		return Spinning + " " + Since(quiet)
	}
	return ""
}

// Since is a short duration: 45s, 12m, 3h.
func Since(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}
