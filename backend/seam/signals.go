package seam

import "syscall"

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func sigNum(n int) syscall.Signal { return syscall.Signal(n) }
