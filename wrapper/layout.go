package wrapper

import "path"

// The state directory layout, shared with dsh-subprocess-e2b so that either
// tool can read what the other published:
//
//	<runtimeRoot>/processes/<id>/
//	    pid          the process-group id, written by the group leader
//	    exit-code    the program's status (0..255), once it exits
//	    signal       sandtop only: the signal number that killed it
//	    environment  NUL-framed child env; deleted as soon as it is read
//	    stdout.log   spill of stdout (collect with spill only)
//	    stderr.log   spill of stderr (collect with spill only)
//	    tag          sandtop only: the spawn's tag, when it has one
//	    argv         sandtop only: the requested argv, NUL-terminated
//	    cwd          sandtop's supervisors only: the working directory
//	    output.marks sandtop's supervisors only: arrival marks of the spills (package outlog)
const (
	ProcessesDir    = "processes"
	PidFile         = "pid"
	ExitCodeFile    = "exit-code"
	SignalFile      = "signal"
	EnvironmentFile = "environment"
	StdoutSpillFile = "stdout.log"
	StderrSpillFile = "stderr.log"
	TagFile         = "tag"
	ArgvFile        = "argv"
)

// ProcessesRoot is the directory holding one state directory per process.
func ProcessesRoot(runtimeRoot string) string {
	return path.Join(runtimeRoot, ProcessesDir)
}

// StateDir is the private state directory of process id.
func StateDir(runtimeRoot, id string) string {
	return path.Join(runtimeRoot, ProcessesDir, id)
}

// Files only sandtop's per-group supervisor (the shim its daemon runs)
// publishes. The state directory belongs to the daemon's user there; the
// program runs as its own user and cannot write it.
const (
	// SupervisorFile: "<shim pid> <start time in clock ticks>", so a new
	// daemon finds the shim again and never mistakes a reused pid for it.
	SupervisorFile = "supervisor"
	// SocketFile: the shim's socket, where a new daemon reconnects.
	SocketFile = "shim.sock"
	// ProblemFile: why the exit status is unknown, when the shim could not
	// publish it. The shim then also leaves SupervisorFile behind, so a
	// settled group with it and no exit-code reads as "exit unknown" even
	// when not even this file fit on the disk.
	ProblemFile = "problem"
	// CoreFile: "1" when the signal that ended the program dumped core.
	CoreFile = "core"
	// OutlivedFile: "pid pgid comm" of each process that outlived the
	// program, at the moment it exited.
	OutlivedFile = "outlived"
	// RingFile: output kept while no daemon reads (and RingFile+".1").
	RingFile = "output.ring"
	// CwdFile: the program's working directory, one line.
	CwdFile = "cwd"
	// MarksFile: when each piece of the spills arrived, on which stream
	// (package outlog's format).
	MarksFile = "output.marks"
)
