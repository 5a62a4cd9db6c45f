package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalNames are the signals "sandtop signal" accepts by name, from the
// platform's own table (golang.org/x/sys/unix), without "SIG".
func signalNames() []string {
	var names []string
	for n := 1; n < 32; n++ {
		if name := unix.SignalName(syscall.Signal(n)); name != "" {
			names = append(names, strings.TrimPrefix(name, "SIG"))
		}
	}
	return names
}

// parseSignal accepts TERM, SIGTERM, sigterm or 15 (1..64).
func parseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 64 {
			return 0, fmt.Errorf("signal %d is outside 1..64", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	names := signalNames()
	sort.Strings(names)
	return 0, fmt.Errorf("unknown signal %q (use a number or one of %s)", s, strings.Join(names, " "))
}

// signalNumber reads back the seam's "SIGTERM" spelling.
func signalNumber(name string) (int, bool) {
	sig, err := parseSignal(name)
	return int(sig), err == nil
}

// sigName is "SIGTERM", or "signal 40" for one without a name.
func sigName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
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
