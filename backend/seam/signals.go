package seam

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalText is the conventional name of sig, e.g. "SIGTERM".
func signalText(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "SIG" + sig.String()
}

// signalInStatus reads the signal out of an end-event status such as
// "signal: killed" (Go's os.ProcessState wording, which envd and sandtop's
// daemon both send). 0 when the status names no signal.
func signalInStatus(status string) syscall.Signal {
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

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func sigNum(n int) syscall.Signal { return syscall.Signal(n) }
