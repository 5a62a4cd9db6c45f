package daemon

// Syscall numbers for groupWaitsOnTerminal (x86-64).
var (
	readSyscalls = map[int]bool{0: true, 17: true, 19: true, 295: true}                                   // read, pread64, readv, preadv
	waitSyscalls = map[int]bool{7: true, 23: true, 232: true, 270: true, 271: true, 281: true, 441: true} // poll, select, epoll_wait, pselect6, ppoll, epoll_pwait, epoll_pwait2
)
