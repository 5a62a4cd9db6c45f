// Package testreap makes every process a test binary starts die with it.
//
// Pdeathsig on the processes a test starts itself is not enough: the daemon
// under test starts shims that by design outlive it, setsid'd process groups
// and tmux servers that daemonize, and none of those are children of the
// test binary by the time it ends. When go test's -timeout panics the binary
// nothing cleans them up, and a timed-out stress run once left shells and
// CPU-bound loops running for hours.
//
// Warden, called early in TestMain, fixes that: the test binary started by
// go test re-executes itself (same arguments, same stdin, stdout and stderr,
// so -v, -json, -run, -bench, -coverprofile and -race work as before) and
// becomes a warden of that child. The warden is a child subreaper, so every
// orphaned descendant (double-forked daemons, setsid groups, tmux servers)
// is re-parented to it; it forwards SIGINT, SIGTERM, SIGQUIT and SIGHUP to
// the child; and once the child exits, however it exits, it SIGKILLs every
// remaining descendant, reaps it, names what it killed on stderr, and exits
// with the child's status (128+signal when a signal killed the child). The
// child dies with the warden (Pdeathsig) if the warden itself is killed.
//
// Set SANDTOP_TESTREAP=off to run the tests in the process go test started,
// for example under a debugger.
package testreap

import "os"

const (
	// offEnv turns the warden off when set to "off" or "0".
	offEnv = "SANDTOP_TESTREAP"
	// childEnv marks the re-executed child (its value is the warden's pid)
	// and every process it starts, so that none becomes a warden again.
	childEnv = "SANDTOP_TESTREAP_WARDEN"
)

// Warden turns the test binary go test started into the warden of a
// re-executed copy of itself, and returns only in that copy (or when the
// warden is off or unsupported): the warden exits with the copy's status.
//
// Call it in TestMain after everything that makes this binary something
// other than the top-level test run, such as shim.RunIfSubcommand or a child
// mode selected by an environment variable (those processes must not become
// wardens), and before setup that should happen once, such as building a
// binary.
func Warden() {
	if os.Getenv(childEnv) != "" {
		return
	}
	switch os.Getenv(offEnv) {
	case "off", "0":
		return
	}
	warden()
}
