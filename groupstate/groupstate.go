// Package groupstate is the one vocabulary for where a process group is in
// its life, and the one rule for whether a process still runs. Each state
// has this one name. The seam alone judges a group's state (it sets
// sandbox.Group.State); the CLI's ls and the TUI show what it judged and
// derive none again, so they cannot disagree about one group.
package groupstate

// State is where a process group is in its life.
type State string

const (
	// Running: the group's leader runs.
	Running State = "running"
	// Stopped: every live member is stopped (SIGSTOP or job control); the
	// group makes no progress until someone sends SIGCONT.
	Stopped State = "stopped"
	// LeaderExited: the leader (the command that was started) exited and
	// descendants live on.
	LeaderExited State = "leader-exited"
	// Unpublished: a state directory without a valid pgid (a spawn that
	// never got that far, or one still starting).
	Unpublished State = "unpublished"
	// Settled: no live member is left.
	Settled State = "settled"
)

func (s State) String() string { return string(s) }

// All lists the states in Rank order.
var All = []State{Running, Stopped, LeaderExited, Unpublished, Settled}

// Rank orders states by how much they may need the operator: live groups
// first, finished ones last.
func (s State) Rank() int {
	for i, a := range All {
		if a == s {
			return i
		}
	}
	return len(All)
}

// Live says whether the group has a live member.
func (s State) Live() bool { return s == Running || s == Stopped || s == LeaderExited }

// ProcLive says whether a process in ps state ps still runs: not a zombie
// (Z), not dead (X, x), and not unknown ("").
func ProcLive(ps string) bool {
	switch ps {
	case "", "Z", "X", "x":
		return false
	}
	return true
}

// ProcStopped says whether a process in ps state ps is stopped (by a
// signal, or traced).
func ProcStopped(ps string) bool { return ps == "T" || ps == "t" }

// Tally reads a group's state off its members, one Add per member.
type Tally struct {
	live, stopped int
	leaderLive    bool
}

// Add counts one member in ps state ps; leader says it is the group's
// leader (its pid is the pgid).
func (t *Tally) Add(ps string, leader bool) {
	if !ProcLive(ps) {
		return
	}
	t.live++
	if ProcStopped(ps) {
		t.stopped++
	}
	if leader {
		t.leaderLive = true
	}
}

// Live is the number of live members.
func (t Tally) Live() int { return t.live }

// State is Settled without a live member, Stopped when every live member
// is stopped (whether or not the leader lives: either way nothing makes
// progress), LeaderExited without a live leader, else Running.
func (t Tally) State() State {
	switch {
	case t.live == 0:
		return Settled
	case t.stopped == t.live:
		return Stopped
	case !t.leaderLive:
		return LeaderExited
	}
	return Running
}
