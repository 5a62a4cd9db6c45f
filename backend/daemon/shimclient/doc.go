// Package shimclient is the daemon's end of a group's shim (package
// backend/shim), as far as it stands without the daemon's registry: the
// runtime root's key (LoadKey), starting a shim and keeping one ahead as a
// spare (Start, Spares), handing it a program (HandOver) and finding it
// again after a restart (Reconnect). Following a shim's frames into a
// process's output, and the groups a killed shim leaves, stay in package
// daemon, which owns the processes.
package shimclient
