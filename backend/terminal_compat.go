package backend

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"sandtop/backend/gen/process/processconnect"
)

// compatSession answers with ps and kill run through Process.Start, for a
// daemon without the extension (stock envd). It cannot see whether a group
// waits for input, so InputWaiting is always false.
type compatSession struct {
	proc processconnect.ProcessClient
	env  map[string]string
}

func (s compatSession) run(ctx context.Context, argv ...string) (controlResult, error) {
	return runControl(ctx, s.proc, s.env, argv, nil)
}

func (s compatSession) foreground(ctx context.Context, pid int) (*Foreground, error) {
	r, err := s.run(ctx, "ps", "-o", "tpgid=", "-p", strconv.Itoa(pid))
	if err != nil {
		return nil, err
	}
	if r.code == 1 { // no such process
		return nil, nil
	}
	if r.code != 0 {
		return nil, controlFailure("ps -o tpgid=", r)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(r.stdout)))
	if err != nil || pgid <= 1 {
		return nil, fmt.Errorf("cannot resolve foreground process group: ps printed %q", strings.TrimSpace(string(r.stdout)))
	}
	return &Foreground{Pgid: pgid}, nil
}

func (s compatSession) groups(ctx context.Context, sid int) ([]int, error) {
	r, err := s.run(ctx, "ps", "-eo", "sid=,pgid=,stat=")
	if err != nil {
		return nil, err
	}
	if r.code != 0 {
		return nil, controlFailure("ps -eo sid=,pgid=,stat=", r)
	}
	return parseSessionGroups(string(r.stdout), sid)
}

// parseSessionGroups picks the groups of session sid that have a member
// that is neither a zombie nor dead, from `ps -eo sid=,pgid=,stat=`.
func parseSessionGroups(table string, sid int) ([]int, error) {
	seen := map[int]bool{}
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("unexpected ps line %q", line)
		}
		s, err1 := strconv.Atoi(f[0])
		g, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("unexpected ps line %q", line)
		}
		if s != sid || deadState(f[2]) {
			continue
		}
		if g <= 1 {
			return nil, fmt.Errorf("unsafe process group %d in terminal session %d", g, sid)
		}
		seen[g] = true
	}
	out := make([]int, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Ints(out)
	return out, nil
}

func (s compatSession) signalGroups(ctx context.Context, pgids []int, sig syscall.Signal) error {
	if len(pgids) == 0 {
		return nil
	}
	name, ok := strings.CutPrefix(signalName(sig), "SIG")
	if !ok {
		return fmt.Errorf("no kill(1) name for signal %d", int(sig))
	}
	argv := []string{"kill", "-" + name, "--"}
	for _, g := range pgids {
		if g <= 1 {
			return fmt.Errorf("unsafe process group %d", g)
		}
		argv = append(argv, "-"+strconv.Itoa(g))
	}
	// A non-zero exit means some group was already gone, which is fine:
	// the callers check what is left. Transport failures are errors.
	_, err := s.run(ctx, argv...)
	return err
}
