// Package seam is sandtop's Go API for the processes of one sandbox, over
// any envd-compatible daemon. A Runtime spawns commands as process groups
// (Spawn, with stdio collected, piped or spilled), ends them with the
// termination transaction (TeardownGroup: SIGTERM, grace, SIGKILL, proof
// that the group is empty, escapees included), opens and attaches terminal
// sessions (SpawnTerminal, AttachTerminal, Terminal.Detach), reads what the
// sandbox runs and has run (Snapshot and Watch: live groups with their
// members, escapees, origins and states, finished groups and terminals,
// in the types of package sandbox, which every front-end shows as they
// come; below them ListGroups, AgentGroups and ListTerminals), signals a
// group with its escapees (SignalGroup) and keeps the environment
// boundary (scrubbed base environment, validated entries). On sandtop's
// own daemon it uses the Supervisor extension and the per-group shim; on
// stock envd it runs the bash wrapper and short control commands, with the
// same results.
//
// Three packages below it do one part each, and none imports the seam:
// control (the control planes, and what all parts share), terminal (PTY
// sessions) and discover (published groups, sandtop's and agents'). The
// names of theirs that the seam's API hands out are repeated in names.go,
// so a caller imports the seam alone.
package seam
