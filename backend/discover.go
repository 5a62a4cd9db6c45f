package backend

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"sandtop/wrapper"
)

// GroupState is what a published process group is doing.
type GroupState string

const (
	// GroupUnpublished: a state directory without a valid pgid (a spawn
	// that never got that far, or one still starting).
	GroupUnpublished GroupState = "unpublished"
	// GroupRunning: the direct command has not exited.
	GroupRunning GroupState = "running"
	// GroupLeaderExited: the direct command exited, descendants live on.
	GroupLeaderExited GroupState = "leader-exited"
	// GroupSettled: no live member is left.
	GroupSettled GroupState = "settled"
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
	// Owned is true when this runtime holds a live handle for it.
	Owned bool
	// Problem explains a state file that could not be parsed.
	Problem string
}

// ListGroups lists every process state directory under the runtime root,
// judged against one snapshot of the process table.
func (r *Runtime) ListGroups(ctx context.Context) ([]GroupInfo, error) {
	root := wrapper.ProcessesRoot(r.cfg.RuntimeRoot)
	entries, err := r.control.ListDir(ctx, root)
	if errors.Is(err, ErrFileNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	table, err := r.control.Processes(ctx)
	if err != nil {
		return nil, err
	}
	owned := r.ownedPgids()
	var out []GroupInfo
	for _, e := range entries {
		if !e.Dir {
			continue
		}
		info, err := r.describeGroup(ctx, e.Name, table)
		if err != nil {
			return nil, err
		}
		info.Owned = info.Pgid > 0 && owned[info.Pgid]
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
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

// describeGroup reads one state directory.
func (r *Runtime) describeGroup(ctx context.Context, id string, table []ProcessEntry) (GroupInfo, error) {
	dir := wrapper.StateDir(r.cfg.RuntimeRoot, id)
	info := GroupInfo{ID: id, StateDir: dir, State: GroupUnpublished}
	files, err := r.control.ListDir(ctx, dir)
	if err != nil {
		if errors.Is(err, ErrFileNotFound) {
			return info, nil // removed while we looked
		}
		return info, err
	}
	has := map[string]bool{}
	for _, f := range files {
		has[f.Name] = true
	}
	for _, name := range []string{wrapper.StdoutSpillFile, wrapper.StderrSpillFile} {
		if has[name] {
			info.SpillPaths = append(info.SpillPaths, dir+"/"+name)
		}
	}
	read := func(name string) string {
		if !has[name] {
			return ""
		}
		b, err := r.control.ReadFile(ctx, dir+"/"+name)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	info.Tag = read(wrapper.TagFile)
	if s := read(wrapper.PidFile); s != "" {
		pgid, err := wrapper.ParsePgid(s)
		if err != nil {
			info.Problem = err.Error()
			return info, nil
		}
		info.Pgid = pgid
	} else {
		return info, nil
	}
	if s := read(wrapper.ExitCodeFile); s != "" {
		code, err := wrapper.ParseExitCode(s)
		if err != nil {
			info.Problem = err.Error()
		} else {
			info.ExitCode = &code
			if code > 128 {
				if sig, err := wrapper.ParseSignal(read(wrapper.SignalFile)); err == nil {
					info.Signal = signalText(sigNum(sig))
				}
			}
		}
	}
	switch {
	case !groupLiveIn(table, info.Pgid):
		info.State = GroupSettled
	case info.ExitCode != nil:
		info.State = GroupLeaderExited
	default:
		info.State = GroupRunning
	}
	return info, nil
}

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
				h.outcome = signalOutcome(t)
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
