package seam

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/groupstate"
	"sandtop/wrapper"
)

// GroupState is what a published process group is doing, in the one
// vocabulary of package groupstate.
type GroupState = groupstate.State

// The states a published group can be in (groupstate's Stopped comes from
// the members, not from what the wrapper publishes).
const (
	GroupUnpublished  = groupstate.Unpublished
	GroupRunning      = groupstate.Running
	GroupLeaderExited = groupstate.LeaderExited
	GroupSettled      = groupstate.Settled
)

// GroupInfo describes one state directory under <runtimeRoot>/processes/,
// whether sandtop or another client using the same layout (a DeepSeek
// Harness agent) wrote it.
type GroupInfo struct {
	ID       string
	StateDir string
	Pgid     int // 0 when unpublished
	State    GroupState
	// ExitCode and Signal are the direct command's published status.
	ExitCode *int
	Signal   string
	// SpillPaths are the spill files present (stdout.log, stderr.log).
	SpillPaths []string
	// Tag is the spawn's tag (SpawnSpec.Tag), kept in the state directory.
	Tag string
	// Changed is when the state directory last changed (its entries are
	// written at the start, and a signal death adds one); zero when the
	// control plane cannot tell.
	Changed time.Time
	// Argv is the requested argv, which sandtop's wrapper keeps so that a
	// finished group can still say what it ran; read once the direct
	// command has exited (nil before, or when not kept).
	Argv []string
	// Origin says whose state root it was found under.
	Origin GroupOrigin
	// Owned is true when this runtime holds a live handle for it.
	Owned bool
	// Problem explains a state file that could not be parsed.
	Problem string
}

// ListGroups lists every process state directory under the runtime root,
// judged against one snapshot of the process table.
func (r *Runtime) ListGroups(ctx context.Context) ([]GroupInfo, error) {
	out, err := r.DiscoverGroups(ctx, r.cfg.RuntimeRoot, OriginSandtop)
	if err != nil {
		return nil, err
	}
	owned := r.ownedPgids()
	for i := range out {
		out[i].Owned = out[i].Pgid > 0 && owned[out[i].Pgid]
	}
	return out, nil
}

// DiscoverGroups lists the process groups under any state root in the
// wrapper's layout (<root>/processes/<id>/), marked with origin: this
// runtime's root is read through the control plane, any other root (an
// agent's DshRoot) with one scanning command, which the extension's file
// reads cannot do outside the runtime root.
func (r *Runtime) DiscoverGroups(ctx context.Context, root string, origin GroupOrigin) ([]GroupInfo, error) {
	var rd stateReader = dshScanner{r.runner}
	if root == r.cfg.RuntimeRoot {
		rd = controlStates{r.control}
	}
	return discoverGroups(ctx, rd, root, origin)
}

func (r *Runtime) ownedPgids() map[int]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[int]bool{}
	for h := range r.live {
		m[h.pgid] = true
	}
	return m
}

// controlStates reads state directories through the control plane: the
// extension's ListDir and ReadFile, or ls and cat on stock envd. It suits
// the runtime root, which the extension is allowed to read.
type controlStates struct{ cp control.Plane }

func (c controlStates) readStates(ctx context.Context, root string) ([]control.StateFiles, []control.ProcessEntry, error) {
	if all, ok := c.cp.(allStatesReader); ok {
		states, err := all.ReadAllStates(ctx, root)
		if err == nil {
			table, err := c.cp.Processes(ctx)
			if err != nil {
				return nil, nil, err
			}
			return states, table, nil
		}
		if !errors.Is(err, control.ErrUnsupported) {
			return nil, nil, err
		}
	}
	entries, err := c.cp.ListDir(ctx, wrapper.ProcessesRoot(root))
	if errors.Is(err, ErrFileNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	table, err := c.cp.Processes(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []control.StateFiles
	for _, e := range entries {
		if !e.Dir {
			continue
		}
		f, err := c.readOne(ctx, root, e.Name)
		if err != nil {
			return nil, nil, err
		}
		f.ModTime = e.ModTime
		out = append(out, f)
	}
	return out, table, nil
}

// allStatesReader is a control plane that reads every state directory of
// the runtime root in one call (sandtop's daemon); control.ErrUnsupported when the
// daemon predates it.
type allStatesReader interface {
	ReadAllStates(ctx context.Context, root string) ([]control.StateFiles, error)
}

// readOne reads one state directory; one removed meanwhile reads as empty.
func (c controlStates) readOne(ctx context.Context, root, id string) (control.StateFiles, error) {
	dir := wrapper.StateDir(root, id)
	files, err := c.cp.ListDir(ctx, dir)
	if errors.Is(err, ErrFileNotFound) {
		return control.StateFiles{ID: id, StdoutSize: -1, StderrSize: -1}, nil
	}
	if err != nil {
		return control.StateFiles{ID: id, StdoutSize: -1, StderrSize: -1}, err
	}
	return control.StateFilesFrom(id, files, func(name string) *string {
		b, err := c.cp.ReadFile(ctx, dir+"/"+name)
		if err != nil {
			return nil
		}
		s := string(b)
		return &s
	}), nil
}

// describeGroup reads and judges one state directory of the runtime root.
func (r *Runtime) describeGroup(ctx context.Context, id string, table []control.ProcessEntry) (GroupInfo, error) {
	f, err := controlStates{r.control}.readOne(ctx, r.cfg.RuntimeRoot, id)
	if err != nil {
		return GroupInfo{ID: id, StateDir: wrapper.StateDir(r.cfg.RuntimeRoot, id), State: GroupUnpublished, Origin: OriginSandtop}, err
	}
	return judgeGroup(r.cfg.RuntimeRoot, f, table, OriginSandtop), nil
}

func trimmed(s string) string { return strings.TrimSpace(s) }

// Adopt returns a handle for a published group found under the runtime
// root (after a restart, or one another client started). It has no
// streams; Done closes once the direct command's status is published or the
// group is gone; Terminate and WaitForExit work as for a spawned handle.
func (r *Runtime) Adopt(ctx context.Context, id string, grace time.Duration) (*Handle, error) {
	if grace <= 0 {
		return nil, fmt.Errorf("adopt grace must be positive (got %v)", grace)
	}
	if id == "" || strings.ContainsAny(id, "/\x00") || id == "." || id == ".." {
		return nil, fmt.Errorf("invalid process id %q", id)
	}
	if err := r.beginSetup(); err != nil {
		return nil, err
	}
	defer r.setups.Done()
	table, err := r.control.Processes(ctx)
	if err != nil {
		return nil, err
	}
	info, err := r.describeGroup(ctx, id, table)
	if err != nil {
		return nil, err
	}
	if info.Pgid == 0 {
		if info.Problem != "" {
			return nil, fmt.Errorf("process %s: %s", id, info.Problem)
		}
		return nil, fmt.Errorf("process %s has not published a process group", id)
	}
	h := &Handle{
		rt: r, id: id, stateDir: info.StateDir, grace: grace, pgid: info.Pgid,
		streamDone: make(chan struct{}), done: make(chan struct{}),
		stopStream: func() {},
	}
	close(h.streamDone) // no stream of ours: never signal a pid we did not start
	r.own(h)
	go h.watchAdopted()
	return h, nil
}

// watchAdopted settles an adopted handle's outcome from published state.
func (h *Handle) watchAdopted() {
	tick := time.NewTicker(h.rt.cfg.PollInterval)
	defer tick.Stop()
	for {
		st := h.readStatus(h.rt.bg)
		if st.err != nil || st.code != nil {
			h.outcome, h.outcomeErr = h.decideOutcome(st, false)
			break
		}
		alive, err := h.rt.control.GroupAlive(h.rt.bg, h.pgid)
		if (err == nil && !alive) || (err != nil && h.rt.sandboxGone(err)) {
			// The wrapper may have published just before the group emptied.
			if st := h.readStatus(h.rt.bg); st.code != nil || st.err != nil {
				h.outcome, h.outcomeErr = h.decideOutcome(st, false)
			} else if t := h.tier(); t != 0 {
				h.outcome = control.SignalOutcome(t)
			} else {
				h.outcomeErr = fmt.Errorf("adopted process group %d ended without publishing an exit status", h.pgid)
			}
			break
		}
		select {
		case <-h.rt.bg.Done():
			h.outcomeErr = ErrDisposing
			close(h.done)
			return
		case <-tick.C:
		}
	}
	close(h.done)
	if ok, _ := h.WaitForExit(h.rt.bg); ok {
		h.rt.release(h)
	}
}
