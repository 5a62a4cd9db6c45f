// Package uisource is the TUI's view of one sandbox: it implements
// ui.Source over the seam alone. Reads come from Runtime.Watch (the same
// snapshot that ls prints), handed on unchanged as package sandbox's
// types; changes go through the same Runtime calls as the CLI's, and
// terminals are attached with the seam's Terminal handle. What stays here
// is the TUI's policy: reconnect backoff, how a lost connection is worded,
// and the TUI's own types (output streams, teardown progress). Neither ui
// nor this package imports RPC code.
package uisource
