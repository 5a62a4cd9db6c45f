// Package vt turns the raw byte stream of a remote terminal into a screen
// that sandtop can draw: an Emulator interface with an adapter over
// github.com/hinshun/vt10x that corrects the vt10x defects its tests name,
// a bounded raw-byte Scrollback that can be replayed, a flood-proof Term
// that drops frames instead of lagging, and renderers to ANSI text (for
// the TUI) and PNG (for screenshots).
//
// Emulators are not safe for concurrent use; Term is.
package vt
