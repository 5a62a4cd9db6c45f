// Package local runs the embedded local sandbox the way tmux runs its
// server: the first sandtop that needs it starts a detached daemon (a
// re-exec of the sandtop binary as "sandtop serve") on a private unix
// socket, and every later sandtop connects to that same daemon. Quitting
// a client never stops the daemon or the processes it supervises.
//
// At most one daemon runs per runtime directory: starters take an
// exclusive flock on a lock file next to the socket and re-check the
// socket before starting anything. A socket left behind by a crashed
// daemon is detected (the connect is refused or /health fails) and
// replaced.
package local
