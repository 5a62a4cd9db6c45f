package shim

import "sync/atomic"

// entered records that this process called RunIfSubcommand, so it can
// serve as its own shim and supervisor.
var entered atomic.Bool

// RunIfSubcommand makes the executable a shim, a standalone supervisor or
// the stand-in for a program that could not be executed when a hidden
// first argument says so: it runs that and exits, and otherwise returns.
// The daemon starts /proc/self/exe as its shims and the seam uploads its
// own executable as the supervisor, so every binary that does either calls
// this first in main: sandtop itself, and the TestMain of every test binary
// that runs a daemon or a supervisor from itself.
func RunIfSubcommand() {
	entered.Store(true)
	shimSubcommand()
	standaloneSubcommand()
}

// Entered reports whether RunIfSubcommand was called: without it, this
// executable started as a shim or a supervisor would run its main (a test
// binary, all its tests) instead.
func Entered() bool { return entered.Load() }
