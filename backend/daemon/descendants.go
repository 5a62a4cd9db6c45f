package daemon

// descendantGroups returns the process groups of every descendant of the
// given started processes, read from /proc, leaving out pgid <= 1 and the
// daemon's own group (it must never be signalled).
func (d *Daemon) descendantGroups(procs []*proc) []int {
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
	var out []int
	var walk func(int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			if g := pgid[c]; g > 1 && g != d.self.pgid && !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
			walk(c)
		}
	}
	for _, p := range procs {
		walk(int(p.pid))
	}
	return out
}
