package daemon

// Syscall numbers for groupWaitsOnTerminal (arm64, the generic table).
var (
	readSyscalls = map[int]bool{63: true, 65: true, 67: true, 69: true}  // read, readv, pread64, preadv
	waitSyscalls = map[int]bool{22: true, 72: true, 73: true, 441: true} // epoll_pwait, pselect6, ppoll, epoll_pwait2
)
