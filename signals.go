package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// signalNames are the signals "sandtop signal" accepts by name.
var signalNames = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "ILL": syscall.SIGILL,
	"TRAP": syscall.SIGTRAP, "ABRT": syscall.SIGABRT, "BUS": syscall.SIGBUS, "FPE": syscall.SIGFPE,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "SEGV": syscall.SIGSEGV, "USR2": syscall.SIGUSR2,
	"PIPE": syscall.SIGPIPE, "ALRM": syscall.SIGALRM, "TERM": syscall.SIGTERM, "CHLD": syscall.SIGCHLD,
	"CONT": syscall.SIGCONT, "STOP": syscall.SIGSTOP, "TSTP": syscall.SIGTSTP, "TTIN": syscall.SIGTTIN,
	"TTOU": syscall.SIGTTOU, "URG": syscall.SIGURG, "XCPU": syscall.SIGXCPU, "XFSZ": syscall.SIGXFSZ,
	"VTALRM": syscall.SIGVTALRM, "PROF": syscall.SIGPROF, "WINCH": syscall.SIGWINCH, "IO": syscall.SIGIO,
	"SYS": syscall.SIGSYS,
}

// parseSignal accepts TERM, SIGTERM, sigterm or 15 (1..64).
func parseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return 0, fmt.Errorf("signal %d is outside 1..64", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	if sig, ok := signalNames[name]; ok {
		return sig, nil
	}
	names := make([]string, 0, len(signalNames))
	for n := range signalNames {
		names = append(names, n)
	}
	sort.Strings(names)
	return 0, fmt.Errorf("unknown signal %q (use a number or one of %s)", s, strings.Join(names, " "))
}

// signalNumber reads back the seam's "SIGTERM" spelling.
func signalNumber(name string) (int, bool) {
	sig, err := parseSignal(name)
	return int(sig), err == nil
}

// parsePositiveID reads a pid or pgid argument.
func parsePositiveID(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, usagef(fmt.Errorf("%s %q is not a positive number", what, s))
	}
	if n == 1 {
		return 0, usagef(fmt.Errorf("%s 1 is init; refusing", what))
	}
	return n, nil
}
