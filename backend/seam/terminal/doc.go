// Package terminal is the seam's terminal sessions: a program on a PTY in
// the sandbox, spawned behind an output boundary (nothing of the bootstrap
// reaches Output), found again after a restart by its process tag, and
// attached, written to, resized, signalled in its foreground group,
// detached, or ended as a whole session (Terminate: TERM, grace, KILL,
// proof that no group of the session is left). A Service, filled in by the
// seam's Runtime, opens them; they reach the sandbox through envd's
// process service and a control.Plane.
package terminal
