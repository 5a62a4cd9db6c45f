package uisource

import (
	"context"
	"io"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/outlog"
	"sandtop/ui"
)

// keptPoll is how often a kept output is read again for what is new;
// about the pace of 'logs -f'. On a stock envd every read and liveness
// check runs a command in the sandbox, so there it is read less often.
const (
	keptPoll       = 200 * time.Millisecond
	keptPollCompat = time.Second
)

// keptStream follows the output a group's supervisor keeps in its state
// directory with arrival marks: every piece carries the time it arrived
// in the sandbox, the replayed ones too. It reads in bounded pieces and
// ends once the group has no live member and all it kept is read.
type keptStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	plane  control.Plane
	pgid   int
	poll   time.Duration
	rd     *outlog.Reader
	segs   []outlog.Segment
	final  bool // the group was seen empty: what is read now is all
	ended  bool
}

func newKeptStream(ctx context.Context, plane control.Plane, pgid int, rd *outlog.Reader, poll time.Duration) *keptStream {
	ctx, cancel := context.WithCancel(ctx)
	return &keptStream{ctx: ctx, cancel: cancel, plane: plane, pgid: pgid, rd: rd, poll: poll}
}

// Next returns the next kept piece, waiting for the group to write one.
func (k *keptStream) Next() (ui.OutputPiece, error) {
	for {
		if len(k.segs) > 0 {
			seg := k.segs[0]
			k.segs = k.segs[1:]
			return ui.OutputPiece{At: seg.At, Data: seg.Data}, nil
		}
		if k.ended || k.ctx.Err() != nil {
			return ui.OutputPiece{}, io.EOF
		}
		segs, err := k.rd.Next(k.ctx, k.final)
		if err != nil {
			if k.ctx.Err() != nil {
				return ui.OutputPiece{}, io.EOF
			}
			return ui.OutputPiece{}, err
		}
		if len(segs) > 0 {
			k.segs = segs
			continue
		}
		if k.final {
			k.ended = true
			continue
		}
		// Nothing new. Asked before the next read, so that read sees all
		// an ended group wrote.
		if alive, err := k.plane.GroupAlive(k.ctx, k.pgid); err == nil && !alive {
			k.final = true
			continue
		}
		select {
		case <-k.ctx.Done():
		case <-time.After(k.poll):
		}
	}
}

// Close stops following; nothing in the sandbox is touched.
func (k *keptStream) Close() error {
	k.cancel()
	return nil
}
