package seam

import (
	"os/exec"
	"syscall"

	"sandtop/backend/seam/control"
)

// runLocalPs reads the process table of this machine directly: the test
// daemon runs here, so this is ground truth independent of the runtime.
func runLocalPs() ([]control.ProcessEntry, error) {
	out, err := exec.Command("ps", "-e", "-o", "pid=", "-o", "pgid=", "-o", "sid=", "-o", "stat=").Output()
	if err != nil {
		return nil, err
	}
	return control.ParsePsTable(out)
}

// killLocalGroup is test cleanup for a sandbox that was shut down.
func killLocalGroup(pgid int) {
	if pgid > 1 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
