package control

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SignalName is the conventional name of sig, e.g. "SIGTERM".
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "SIG" + sig.String()
}

// SignalInStatus reads the signal out of an end-event status such as
// "signal: killed" (Go's os.ProcessState wording, which envd and sandtop's
// daemon both send). 0 when the status names no signal.
func SignalInStatus(status string) syscall.Signal {
	desc, ok := strings.CutPrefix(status, "signal: ")
	if !ok {
		return 0
	}
	desc = strings.TrimSuffix(desc, " (core dumped)")
	for sig := syscall.Signal(1); sig < 65; sig++ {
		if sig.String() == desc {
			return sig
		}
	}
	return 0
}

// KillSettle is the least time a teardown or a terminal's Terminate waits
// for SIGKILLed processes to be gone before it reports survivors. A killed
// orphan is gone only once its reaper ran: on a loaded 2-core machine that
// took over a second (a terminal's ignored-TERM background job, reported
// as a survivor in a CI run), so the wait is three. It costs time only
// when something does survive.
const KillSettle = 3 * time.Second

// MaxGrace is the longest TERM→KILL grace a spawn or terminal takes:
// 2^31-1 ms, so that a terminal's grace, which its daemon tag keeps in
// milliseconds, fits in 32 bits.
const MaxGrace = 2147483647 * time.Millisecond

// ValidateGrace accepts a grace in (0, MaxGrace]; what names the field in
// the error ("subprocess grace").
func ValidateGrace(what string, grace time.Duration) error {
	if grace <= 0 || grace > MaxGrace {
		return fmt.Errorf("%s must be positive and at most %v (got %v)", what, MaxGrace, grace)
	}
	return nil
}
