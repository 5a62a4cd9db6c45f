package seam

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sandtop/backend/seam/control"
)

// adopt returns a handle for a published group found under the runtime
// root (after a restart, or one another client started). It has no
// streams; Done closes once the direct command's status is published or the
// group is gone; Terminate and WaitForExit work as for a spawned handle.
func (r *Runtime) adopt(ctx context.Context, id string, grace time.Duration) (*Handle, error) {
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
