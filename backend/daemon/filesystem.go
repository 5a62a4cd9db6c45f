package daemon

import "sandtop/backend/daemon/fsservice"

// fsIdentity is who a filesystem request acts as: the same user a process
// started with that name would run as.
func (d *Daemon) fsIdentity(name string) (fsservice.Identity, error) {
	u, err := d.resolveUser(name)
	if err != nil {
		return fsservice.Identity{}, err
	}
	_, workdir := d.defaults.get()
	return fsservice.Identity{Name: u.name, Home: u.home, Cred: u.cred, Workdir: workdir}, nil
}
