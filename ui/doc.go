// Package ui is sandtop's terminal UI (Bubble Tea): the groups tree, the
// terminals list, the detail pane (a group's output or a terminal's screen
// through vt/), dialogs, and the action table that binds keys, palette,
// help and footers. It reaches a sandbox only through the Source
// interface (implemented over the seam by package uisource) and a
// provider through ControlPlane, so it imports no RPC or generated code.
package ui
