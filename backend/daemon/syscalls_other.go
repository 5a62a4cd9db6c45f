//go:build !amd64 && !arm64

package daemon

// Elsewhere the syscall numbers are not tabulated; input waiting reads false.
var (
	readSyscalls = map[int]bool{}
	waitSyscalls = map[int]bool{}
)
