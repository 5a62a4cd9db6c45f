// Package ui is sandtop's terminal UI (Bubble Tea): the groups tree, the
// terminals list, the detail pane (a group's output or a terminal's screen
// through vt/), dialogs, and the action table that binds keys, palette,
// help and footers. It reaches a sandbox only through the Source
// interface (implemented over the seam by package uisource) and a
// provider through Provider, so it imports no RPC or generated code.
// What a sandbox runs comes in package sandbox's types, each group's state
// judged by the seam: the UI shows it and derives none of its own.
package ui
