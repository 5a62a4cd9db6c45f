package ui

import (
	"context"
	"errors"
	"time"

	"sandtop/safetext"
	"sandtop/sandbox"
)

// SandboxSpec is one sandbox the TUI can show, like a k9s context. The TUI
// holds several at once; the header always names the one on screen, and
// every action goes to that one's Source only.
type SandboxSpec struct {
	// Name is unique among the sandboxes; the header, the picker, the event
	// log tag and ":ctx NAME" use it.
	Name string
	// Kind and Target describe where it is ("local", "unix:/run/x.sock");
	// they are shown in the picker and must hold no secrets.
	Kind, Target string
	// Source is an already open sandbox. When nil, Open is called in the
	// background at startup (and again when the operator picks the sandbox
	// after a failure).
	Source Source
	Open   func(ctx context.Context) (Source, error)
	// Err is a failure known before the TUI started (an unreadable token
	// file, an E2B listing that failed); with no Open it is final.
	Err error
	// ReadOnly refuses every mutation in this sandbox (Options.ReadOnly
	// refuses them in all).
	ReadOnly bool
	// Cwd is where :run starts programs here; empty means the daemon's.
	Cwd string
	// Provider is the sandbox's provider (E2B): its state, time left,
	// metrics and logs, and the explicit resume and extend. nil for other
	// sandboxes. ProviderInfo is what the listing already said, shown until
	// the first refresh.
	Provider     Provider
	ProviderInfo ProviderInfo
	// Summary, when set, reads the sandbox once for the fleet view's
	// counts, without the TUI opening it: such a sandbox is dialled only
	// when the operator visits it (see fleet.go).
	Summary func(ctx context.Context) (sandbox.Snapshot, error)
}

// openState is how far a sandbox's Source has come.
type openState int

const (
	openPending openState = iota // Open not called yet
	openRunning                  // Open in flight
	openReady                    // Source usable
	openFailed                   // Open failed; err says why
)

// sandbox is everything the TUI keeps per sandbox: the Source, the last
// process table, the selection, the marks and the teardowns. Code that
// acts on one takes it explicitly: keys and views the one on screen
// (Model.cur), a dialog the one it was opened for (Model.dialogSB), and
// messages from a Source come back tagged with their sandbox (scopedMsg)
// and are applied to it, never to the one shown.
type sandboxState struct {
	spec     SandboxSpec
	fleetRow styledRow // the fleet view's last row, styled
	index    int
	state    openState
	openErr  error
	src      Source
	watched  bool // the process table watch has been started

	events eventSink

	info     SandboxInfo
	conn     connState
	connErr  error
	watchGen int
	// snap is the last snapshot applied: the clock applies it again when a
	// settled ghost's time is up, since an idle table sends no other.
	snap sandbox.Snapshot

	tree       treeState
	ghosts     map[int]ghost
	firstSeen  map[int]time.Time // when each listed pgid first appeared
	terms      []sandbox.Terminal
	termCursor int
	marks      map[int]bool
	teardowns  map[int]*teardown

	prov providerState
	sum  fleetSummary
}

func newSandbox(spec SandboxSpec, index int, log *eventLog) *sandboxState {
	sb := &sandboxState{
		spec: spec, index: index, src: spec.Source,
		events: eventSink{log: log, tag: spec.Name},
		tree:   newTreeState(), ghosts: map[int]ghost{}, firstSeen: map[int]time.Time{},
		marks: map[int]bool{}, teardowns: map[int]*teardown{},
	}
	sb.info.Name = spec.Name
	sb.prov.info = spec.ProviderInfo
	switch {
	case spec.Source != nil:
		sb.state = openReady
	case spec.Open == nil:
		sb.state, sb.openErr = openFailed, spec.Err
		if sb.openErr == nil {
			sb.openErr = errors.New("no source")
		}
	case spec.Err != nil:
		sb.state, sb.openErr = openFailed, spec.Err
	}
	return sb
}

// activeTeardowns counts this sandbox's teardowns still escalating.
func (sb *sandboxState) activeTeardowns() int {
	n := 0
	for _, td := range sb.teardowns {
		if td.finished.IsZero() {
			n++
		}
	}
	return n
}

// liveGroups counts the groups with members, for the picker.
func (sb *sandboxState) liveGroups() int {
	n := 0
	for i := range sb.tree.groups {
		if sb.tree.groups[i].Live() {
			n++
		}
	}
	return n
}

// stateText is the one-line connection state the picker and header show.
func (sb *sandboxState) stateText() string {
	if sb.spec.Provider != nil {
		switch {
		case sb.prov.gone:
			return "gone (killed or expired)"
		case sb.prov.info.Paused():
			return "paused"
		}
	}
	switch sb.state {
	case openPending, openRunning:
		return "connecting"
	case openFailed:
		return "unreachable: " + errText(sb.openErr)
	}
	switch sb.conn {
	case connUp:
		return "connected"
	case connLost:
		return "disconnected"
	}
	if !sb.watched {
		return "ready"
	}
	return "connecting"
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return safetext.Line(err.Error())
}
