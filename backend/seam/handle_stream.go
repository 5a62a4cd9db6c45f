package seam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/seam/control"
	"sandtop/wrapper"
)

var errTerminated = errors.New("process is being terminated")

// wrapperHead separates the wrapper's published lines from the program's
// output. Each stream starts with the line (stderr after whatever bash wrote
// before the guard), and the daemon may deliver the two in either order.
type wrapperHead struct {
	outDone, errDone bool
	out, err         []byte // held until the stream's line has gone by
}

// expectNoPublishedLine is for a shim's group: no published line precedes
// the program's output.
func (w *wrapperHead) expectNoPublishedLine() { w.outDone, w.errDone = true, true }

// stderr returns the program's part of b; before the line, bytes are held
// as the wrapper's own (see wrapperNoise).
func (w *wrapperHead) stderr(b []byte) []byte {
	if w.errDone || len(b) == 0 {
		return b
	}
	w.err = append(w.err, b...)
	if before, after, ok := wrapper.CutPublished(w.err); ok {
		w.err, w.errDone = before, true
		return after
	}
	if len(w.err) > 4096 {
		// No wrapper says this much before its line: keep it all.
		all := w.err
		w.err, w.errDone = nil, true
		return all
	}
	return nil
}

// wrapperNoise is what stderr held before its line, for an error message.
func (w *wrapperHead) wrapperNoise() []byte { return w.err }

// stdout returns the program's part of b and, once stdout's first line is
// complete, the publication it makes (a pgid or why there is none).
func (w *wrapperHead) stdout(b []byte) ([]byte, *publication) {
	if w.outDone {
		return b, nil
	}
	w.out = append(w.out, b...)
	line, rest, ok := bytes.Cut(w.out, []byte{'\n'})
	if !ok {
		if len(w.out) > wrapper.MaxPublishedLine {
			p := &publication{err: fmt.Errorf("spawn failed: %w", badHeader(w.out))}
			w.out, w.outDone = nil, true
			return nil, p
		}
		return nil, nil
	}
	w.out, w.outDone = nil, true
	pgid, err := wrapper.ParsePublishedLine(string(line))
	if err != nil {
		return nil, &publication{err: fmt.Errorf("spawn failed: %w", err)}
	}
	return rest, &publication{pgid: pgid}
}

// pump owns the Start stream: it delivers the environment payload, waits
// for the published group, then routes output until the end event.
func (h *Handle) pump(stream *connect.ServerStreamForClient[process.StartResponse], payload []byte, closeStdin bool, published chan<- publication) {
	defer stream.Close()
	var head wrapperHead
	isPublished := false
	publish := func(p publication) {
		if !isPublished {
			isPublished = true
			published <- p
		}
	}
	for stream.Receive() {
		switch e := stream.Msg().GetEvent().GetEvent().(type) {
		case *process.ProcessEvent_Start:
			h.startPid.Store(int64(e.Start.GetPid()))
			if err := h.sendPayload(payload, closeStdin); err != nil {
				publish(publication{err: fmt.Errorf("spawn failed: deliver the environment: %w", err)})
			}
			if h.underShim && e.Start.GetPid() > 1 {
				// The shim published the program's pid, which leads its
				// group.
				publish(publication{pgid: int(e.Start.GetPid())})
				head.expectNoPublishedLine()
			}
		case *process.ProcessEvent_Data:
			if b := head.stderr(e.Data.GetStderr()); len(b) > 0 {
				h.route(false, b)
			}
			b, p := head.stdout(e.Data.GetStdout())
			if p != nil {
				publish(*p)
			}
			if len(b) > 0 {
				h.route(true, b)
			}
		case *process.ProcessEvent_End:
			h.end = e.End
		}
	}
	if h.end == nil {
		h.streamErr = stream.Err()
		if h.streamErr == nil {
			h.streamErr = errors.New("process stream ended without an end event")
		}
	}
	if !isPublished {
		publish(publication{err: h.unpublishedError(head.wrapperNoise())})
	}
	h.finishPipes()
	h.inherit.close()
	close(h.streamDone)
}

func badHeader(b []byte) error {
	return fmt.Errorf("wrapper did not publish its process group (stdout began %q)", control.ClipText(b))
}

func (h *Handle) unpublishedError(stderr []byte) error {
	if h.end == nil {
		return fmt.Errorf("spawn failed: %w", h.streamErr)
	}
	msg := fmt.Sprintf("spawn failed: remote command exited before publishing its process-group id (%s)", h.end.GetStatus())
	if s := strings.TrimSpace(string(stderr)); s != "" {
		msg += ": " + control.ClipText(stderr)
	}
	return errors.New(msg)
}

func (h *Handle) sendPayload(payload []byte, closeStdin bool) error {
	ctx := h.rt.bg
	for len(payload) > 0 {
		n := min(len(payload), stdinChunk)
		if err := h.sendStdin(ctx, payload[:n]); err != nil {
			return err
		}
		payload = payload[n:]
	}
	if closeStdin {
		// The payload is delivered; a command quick enough to have exited
		// already needs no EOF.
		if err := h.closeStdin(ctx); err != nil && connect.CodeOf(err) != connect.CodeNotFound {
			return err
		}
	}
	return nil
}

// route delivers one output chunk according to the stream's mode. Once a
// termination is requested, only collect readers keep receiving bytes. p is
// route's to keep: each received message is a fresh one, and the wrapper's
// head hands over what it held without keeping it.
func (h *Handle) route(stdout bool, p []byte) {
	mode, pipe, reader, sink := h.modes.Stderr, h.errPipe, h.Collected.Stderr, h.rt.cfg.Stderr
	if stdout {
		mode, pipe, reader, sink = h.modes.Stdout, h.outPipe, h.Collected.Stdout, h.rt.cfg.Stdout
	}
	switch {
	case mode.Collect != nil:
		reader.append(p)
	case h.terminationRequested():
	case mode.Pipe:
		// A consumer that closed its end or went away is contained: the
		// bytes are dropped and the outcome is unaffected.
		_ = pipe.write(p)
	case mode.Inherit:
		h.inherit.write(sink, p)
	}
}

func (h *Handle) finishPipes() {
	end := error(io.EOF)
	if h.end == nil && !h.terminationRequested() {
		end = h.streamErr
	}
	for _, p := range []*outputPipe{h.outPipe, h.errPipe} {
		if p != nil {
			p.finish(end)
		}
	}
}

// monitor settles the outcome. With a piped output stream it waits for the
// stream to end, losslessly. Otherwise it also polls the published exit
// status: once the direct command has exited, descendants that keep the
// output open get the grace, after which the handle disconnects (the group
// stays owned) and the incomplete spills are withdrawn.
func (h *Handle) monitor() {
	drainExpired := false
	var status *publishedStatus
	if !h.modes.Stdout.Pipe && !h.modes.Stderr.Pipe {
		drainExpired, status = h.boundDrain()
	} else {
		<-h.streamDone
	}
	if h.detached.Load() {
		// Nothing follows the group any more: its spills stay for whoever
		// reads them later, and no outcome is decided here.
		h.outcomeErr = ErrDetached
		close(h.done)
		return
	}
	if status == nil {
		status = h.readStatus(h.rt.bg)
	}
	h.outcome, h.outcomeErr = h.decideOutcome(status, drainExpired)
	h.sealSpills(drainExpired)
	close(h.done)
	h.rt.jobs.Add(1)
	go func() {
		defer h.rt.jobs.Done()
		if ok, _ := h.WaitForExit(h.rt.bg); ok {
			h.rt.release(h)
		}
	}()
}

func (h *Handle) boundDrain() (bool, *publishedStatus) {
	tick := time.NewTicker(h.rt.cfg.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-h.streamDone:
			return false, nil
		case <-tick.C:
		}
		if h.detached.Load() {
			<-h.streamDone
			return false, nil
		}
		st := h.readStatus(h.rt.bg)
		if st == nil || st.code == nil {
			continue
		}
		if h.drainWithin(h.grace) {
			return false, st
		}
		h.stopStream()
		<-h.streamDone
		return true, st
	}
}

// maxQuietDrain bounds how long a stream may keep draining after the grace
// when no member of the group is left to hold it open.
const maxQuietDrain = 30 * time.Second

// drainWithin waits for the stream to end. The grace is for descendants
// that hold the output open; once it is spent, the wait goes on only while
// the group is proven empty: then only the wrapper, about to exit, holds
// the pipes (a loaded sandbox can take longer than the grace for that), and
// cutting it off would lose output nobody is withholding.
func (h *Handle) drainWithin(grace time.Duration) bool {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	deadline := time.Now().Add(maxQuietDrain)
	for {
		select {
		case <-h.streamDone:
			return true
		case <-timer.C:
		}
		if alive, err := h.rt.control.GroupAlive(h.rt.bg, h.pgid); err != nil || alive || time.Now().After(deadline) {
			return false
		}
		timer.Reset(h.rt.cfg.PollInterval)
	}
}

// publishedStatus is what the wrapper wrote about the direct command.
type publishedStatus struct {
	code   *int
	signal int
	err    error // the files held something invalid
}

func (h *Handle) readStatus(ctx context.Context) *publishedStatus {
	st := &publishedStatus{}
	b, err := h.rt.control.ReadFile(ctx, h.stateDir+"/"+wrapper.ExitCodeFile)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return st
	}
	code, err := wrapper.ParseExitCode(string(b))
	if err != nil {
		st.err = err
		return st
	}
	st.code = &code
	if code > 128 {
		if b, err := h.rt.control.ReadFile(ctx, h.stateDir+"/"+wrapper.SignalFile); err == nil {
			if sig, err := wrapper.ParseSignal(string(b)); err == nil {
				st.signal = sig
			}
		}
	}
	return st
}

// decideOutcome applies, in order: the direct command's published status
// (with its published signal), the daemon's wait status of the wrapper
// (which re-raises the command's signal), the requested termination tier,
// then the daemon's exit code.
func (h *Handle) decideOutcome(st *publishedStatus, drainExpired bool) (Outcome, error) {
	if st.err != nil {
		return Outcome{}, st.err
	}
	if st.code != nil {
		if st.signal != 0 {
			return control.SignalOutcome(sigNum(st.signal)), nil
		}
		return control.ExitOutcome(*st.code), nil
	}
	if h.end == nil {
		if h.terminationRequested() || h.rt.sandboxGone(h.streamErr) {
			if t := h.tier(); t != 0 {
				return control.SignalOutcome(t), nil
			}
			return control.SignalOutcome(sigKill), nil
		}
		return Outcome{}, fmt.Errorf("process stream failed: %w", h.streamErr)
	}
	if sig := control.SignalInStatus(h.end.GetStatus()); sig != 0 {
		return control.SignalOutcome(sig), nil
	}
	if t := h.tier(); t != 0 && h.end.GetExitCode() != 0 {
		return control.SignalOutcome(t), nil
	}
	return control.ExitOutcome(int(h.end.GetExitCode())), nil
}

func (h *Handle) sealSpills(drainExpired bool) {
	var remove []string
	for _, r := range []*OutputReader{h.Collected.Stdout, h.Collected.Stderr} {
		if r != nil {
			if p := r.sealSpill(drainExpired); p != "" {
				remove = append(remove, p)
			}
		}
	}
	if len(remove) == 0 {
		return
	}
	h.rt.jobs.Add(1)
	go func() {
		defer h.rt.jobs.Done()
		// Best effort: a spill that is not advertised is harmless.
		if err := h.rt.control.Remove(h.rt.bg, remove...); err != nil {
			h.rt.log.Debug("remove withdrawn spill", "paths", remove, "err", err)
		}
	}()
}
