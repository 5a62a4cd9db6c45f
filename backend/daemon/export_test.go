package daemon

// SparePid is the pid of the shim waiting for the next session-dir Start,
// or 0.
func (d *Daemon) SparePid() int {
	d.spareMu.Lock()
	defer d.spareMu.Unlock()
	if d.spare == nil {
		return 0
	}
	return d.spare.pid
}
