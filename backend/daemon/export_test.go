package daemon

// SparePid is the pid of the shim waiting for the next session-dir Start,
// or 0.
func (d *Daemon) SparePid() int { return d.spares.Pid() }
