package daemon

import "sandtop/backend/shim"

// descendants reads /proc and returns what descends from the given started
// processes: the process groups of those that moved into groups of their
// own (pgid > 1, never the daemon's), and the pids of those still in the
// daemon's own group, as plain starts are (as in envd), which can only be
// signalled one by one.
func (d *Daemon) descendants(procs []*proc) (groups, inDaemonGroup []int) {
	children := map[int][]int{}
	pgid := map[int]int{}
	for _, pid := range allPids() {
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		children[st.ppid] = append(children[st.ppid], pid)
		pgid[pid] = st.pgid
	}
	seen := map[int]bool{}
	var walk func(int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			switch g := pgid[c]; {
			case g == d.self.pgid:
				inDaemonGroup = append(inDaemonGroup, c)
			case g > 1 && !seen[g]:
				seen[g] = true
				groups = append(groups, g)
			}
			walk(c)
		}
	}
	for _, p := range procs {
		walk(int(p.pid))
	}
	return groups, inDaemonGroup
}

// subtree reads the stat of every descendant of pid (not pid itself),
// zombies included, by walking /proc/PID/task/TID/children: its cost
// follows the tree, not the machine. ok is false without those files.
func subtree(pid int) (out []procStat, ok bool) {
	ok = shim.WalkDescendants(pid, func(c int) bool {
		st, err := readStat(c)
		if err != nil {
			return false // gone meanwhile
		}
		out = append(out, st)
		return true
	})
	return out, ok
}
