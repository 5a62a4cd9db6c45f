// Package vt turns the raw byte stream of a remote terminal into a screen
// that sandtop can draw: an Emulator interface with an adapter over
// github.com/hinshun/vt10x that corrects the vt10x defects listed in
// spec/tui.md §3, a bounded raw-byte Scrollback that can be replayed, a
// flood-proof Term that drops frames instead of lagging, a Pane with a
// pinned history view, and renderers to ANSI text (for the TUI) and PNG
// (for screenshots).
//
// Emulators are not safe for concurrent use; Term is.
package vt
