// Package uisource is the TUI's view of one sandbox: it implements
// ui.Source over the seam (backend.Runtime for spawning, signals and
// teardown) and the daemon's Connect API for the live table, folding the
// stock-envd wrapper's two halves into one row, reading finished groups
// from their published state and marking each group's origin. The ui
// package knows only the Source interface, so it links no RPC code.
package uisource
