// Package transport is how clients reach the daemon: a listener on TCP or
// a unix socket under the token rule (Listen), probation for connections
// that have not authenticated yet (Probation, ConnContext, Authenticated),
// and, for a daemon without a token, the TCP peer's user (OwnUserOnly,
// PeerRefusal). It knows nothing of the daemon's services; the daemon's
// Guard decides what authenticates a request and says so here.
package transport
