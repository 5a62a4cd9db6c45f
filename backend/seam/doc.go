// Package seam is sandtop's Go API for the processes of one sandbox, over
// any envd-compatible daemon.
//
// A Runtime has one read path: Snapshot and Watch say what the sandbox
// runs and has run (live groups with their members, escapees, origins
// and states, finished groups, terminals, in the types of package sandbox,
// which every front-end shows as they come); GroupDetails, Output, OutputLog and
// ReadStateFile read one group's facts and kept output, and GroupAlive
// answers the one question a follower of that output asks often.
// Everything else it exports acts: Spawn (stdio collected, piped or
// spilled), Signal, TeardownGroup (SIGTERM, grace, SIGKILL, proof that the
// group is empty, escapees included), SpawnTerminal and AttachTerminal,
// ForegroundGroup for a terminal's signals, PruneFinished and
// RemoveGroupState for the runtime's own state files, Dispose. Durations
// in the API are time.Duration; wire formats keep their own units.
//
// On sandtop's own daemon it uses the Supervisor extension and the
// per-group shim; on stock envd it runs the bash wrapper and short control
// commands, with the same results.
//
// Three packages below it do one part each, and none imports the seam:
// control (the control planes, and what all parts share), terminal (PTY
// sessions) and discover (published groups, sandtop's and agents'). No
// package outside the seam imports them (the repository's layout test
// checks it): the names of theirs that the seam's API hands out are
// repeated in names.go, so a caller imports the seam alone.
package seam
