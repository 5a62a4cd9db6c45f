// Package control is the seam's lowest layer: what it asks of a sandbox
// besides starting programs. A Plane reads the process table, signals whole
// groups and reads the state directories the wrapper or the shim publish;
// Extension does it through sandtop's Supervisor extension, Compat through
// short bash commands (a Runner) on stock envd. It also holds what every
// part of the seam shares: an Outcome, the error kinds, signal names.
package control
