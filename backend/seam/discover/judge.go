package discover

import (
	"context"
	"path"
	"sort"
	"syscall"

	"sandtop/backend/seam/control"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/wrapper"
)

// One discovery path serves both kinds of state root: sandtop's runtime
// root (the seam's listing and adoption) and a DeepSeek Harness agent's
// <cwd>/.dsh-e2b (Agent, DiscoverAgent). Both use the wrapper's layout,
// <root>/processes/<id>/{pid,exit-code,signal,tag,argv,stdout.log,stderr.log};
// only how the files are read differs (a StateReader), and what they mean
// is decided once, in Judge.

// StateReader reads every process state directory under a root, and the
// process table, as close together as it can. PlaneStates and Scanner are
// the two.
type StateReader interface {
	readStates(ctx context.Context, root string) ([]control.StateFiles, []control.ProcessEntry, error)
}

// Groups lists and judges the process groups under root.
func Groups(ctx context.Context, rd StateReader, root string, origin sandbox.Origin) ([]PublishedGroup, error) {
	states, table, err := rd.readStates(ctx, root)
	if err != nil {
		return nil, err
	}
	out := make([]PublishedGroup, 0, len(states))
	for _, f := range states {
		out = append(out, Judge(root, f, table, origin))
	}
	// Oldest first where the times are known: ids are random.
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Changed.Equal(out[j].Changed) {
			return out[i].Changed.Before(out[j].Changed)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Judge turns one state directory into a PublishedGroup: a missing or
// invalid pid leaves it unpublished (with a Problem for an invalid one);
// otherwise the process table says whether a live member is left.
func Judge(root string, f control.StateFiles, table []control.ProcessEntry, origin sandbox.Origin) PublishedGroup {
	dir := wrapper.StateDir(root, f.ID)
	g := PublishedGroup{ID: f.ID, StateDir: dir, State: groupstate.Unpublished, Origin: origin, Changed: f.ModTime, OutputAt: f.OutputAt}
	if f.Tag != nil {
		g.Tag = trimmed(*f.Tag)
	}
	if f.Argv != nil {
		g.Argv = wrapper.ParseArgv(*f.Argv)
	}
	if f.StdoutSize >= 0 {
		g.SpillPaths = append(g.SpillPaths, path.Join(dir, wrapper.StdoutSpillFile))
	}
	if f.StderrSize >= 0 {
		g.SpillPaths = append(g.SpillPaths, path.Join(dir, wrapper.StderrSpillFile))
	}
	if f.Pid == nil || trimmed(*f.Pid) == "" {
		return g
	}
	pgid, err := wrapper.ParsePgid(*f.Pid)
	if err != nil {
		g.Problem = err.Error()
		return g
	}
	g.Pgid = pgid
	if f.ExitCode != nil && trimmed(*f.ExitCode) != "" {
		code, err := wrapper.ParseExitCode(*f.ExitCode)
		if err != nil {
			g.Problem = err.Error()
		} else {
			g.ExitCode = &code
			if code > 128 && f.Signal != nil {
				if sig, err := wrapper.ParseSignal(*f.Signal); err == nil {
					g.Signal = control.SignalName(syscall.Signal(sig))
				}
			}
		}
	}
	switch {
	case !control.GroupLiveIn(table, pgid) && f.SupervisorRunning && g.ExitCode == nil:
		// The program has ended and its supervisor is writing down how:
		// not settled (and not "exit unknown") until it has.
		g.State = groupstate.LeaderExited
	case !control.GroupLiveIn(table, pgid):
		g.State = groupstate.Settled
		if g.ExitCode == nil && g.Problem == "" && (f.Problem != nil || f.Supervised) {
			g.Problem = "exit unknown: the group's supervisor ended without publishing the exit status"
			if f.Problem != nil && trimmed(*f.Problem) != "" {
				g.Problem = trimmed(*f.Problem)
			}
		}
	case g.ExitCode != nil:
		g.State = groupstate.LeaderExited
	default:
		g.State = groupstate.Running
	}
	return g
}
