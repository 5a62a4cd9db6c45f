package seam

import (
	"context"

	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/seam/control"
	"sandtop/backend/seam/discover"
	"sandtop/backend/seam/terminal"
)

// The seam is built of smaller packages; the names of theirs that its API
// hands out are repeated here, so a caller imports the seam alone.

// Outcome is how a direct command or a terminal's program ended.
type Outcome = control.Outcome

// Escapee is a process that left its group and was ended with it.
type Escapee = control.Escapee

// ProcessRow is one row of the process table on stock envd.
type ProcessRow = control.ProcessRow

// The errors of the control plane that callers test for with errors.Is.
var (
	// ErrNotFound: no such process or group in the sandbox.
	ErrNotFound = control.ErrNotFound
	// ErrFileNotFound: a read of the sandbox named a path that does not
	// exist.
	ErrFileNotFound = control.ErrFileNotFound
)

// Terminal is a live PTY session in the sandbox (SpawnTerminal,
// AttachTerminal).
type Terminal = terminal.Terminal

// TerminalSpec describes one terminal session.
type TerminalSpec = terminal.Spec

// TerminalInfo describes one live sandtop terminal.
type TerminalInfo = terminal.Info

// ErrDetached is what a detached handle (a Terminal's or a Handle's)
// answers: the program still runs in the sandbox, this handle no longer
// follows it.
var ErrDetached = terminal.ErrDetached

// PublishedGroup is what one state directory published, judged against the
// process table: the record Snapshot builds its groups from, and what
// PruneFinished removes.
type PublishedGroup = discover.PublishedGroup

// AgentGroup is one process group an agent started.
type AgentGroup = discover.AgentGroup

// AgentDiscovery is one snapshot of an agent's state root.
type AgentDiscovery = discover.AgentDiscovery

// ErrAgentUnpublished refuses to signal a group whose pgid is unknown.
var ErrAgentUnpublished = discover.ErrAgentUnpublished

// AgentRoot is an agent's state root for a given cwd ("" means
// dsh-subprocess-e2b's default).
func AgentRoot(cwd string) string { return discover.AgentRoot(cwd) }

// discoverAgentAt lists what an agent published under root (AgentRoot(cwd)),
// over its own control commands; Runtime.discoverAgent does the same with
// the Runtime's.
func discoverAgentAt(ctx context.Context, proc processconnect.ProcessClient, root string) (AgentDiscovery, error) {
	return discover.DiscoverAgent(ctx, proc, root)
}
