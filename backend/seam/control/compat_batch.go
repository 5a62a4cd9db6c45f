package control

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// On stock envd every look at the table and every signal is a command. A
// teardown of many groups at once (sandtop kill of a thousand) asks for
// one signal and a few looks per group; run one by one, that was a
// thousand kills and thousands of ps runs. A Batch coalesces them: calls
// that arrive while a command is in flight wait for the next one, which
// carries them all. Each caller's answer comes from a command that started
// after it asked, so nothing it is told predates its own question.

// Batch coalesces a Compat plane's concurrent table reads and signals.
type Batch struct {
	table   coalescer[struct{}, []ProcessEntry]
	signals coalescer[groupSignal, bool]
}

type groupSignal struct {
	pgid int
	sig  syscall.Signal
}

// NewCompat is a Compat plane whose table reads and signals are batched.
func NewCompat(r Runner) Compat { return Compat{Runner: r, Batch: &Batch{}} }

// batchTimeout bounds one batched command: it serves callers with
// different contexts, so it has its own.
const batchTimeout = 30 * time.Second

// coalescer runs do for every request that arrived while the previous run
// was in flight, all at once.
type coalescer[Req, Res any] struct {
	mu      sync.Mutex
	waiting []pending[Req, Res]
	running bool
}

type pending[Req, Res any] struct {
	req Req
	out chan batchResult[Res]
}

type batchResult[Res any] struct {
	res Res
	err error
}

func (c *coalescer[Req, Res]) call(ctx context.Context, req Req, do func(ctx context.Context, reqs []Req) ([]Res, error)) (Res, error) {
	p := pending[Req, Res]{req: req, out: make(chan batchResult[Res], 1)}
	c.mu.Lock()
	c.waiting = append(c.waiting, p)
	if !c.running {
		c.running = true
		go c.loop(do)
	}
	c.mu.Unlock()
	select {
	case r := <-p.out:
		return r.res, r.err
	case <-ctx.Done():
		var zero Res
		return zero, ctx.Err()
	}
}

func (c *coalescer[Req, Res]) loop(do func(ctx context.Context, reqs []Req) ([]Res, error)) {
	for {
		c.mu.Lock()
		batch := c.waiting
		c.waiting = nil
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		reqs := make([]Req, len(batch))
		for i, p := range batch {
			reqs[i] = p.req
		}
		ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
		res, err := do(ctx, reqs)
		cancel()
		for i, p := range batch {
			var r batchResult[Res]
			r.err = err
			if err == nil {
				r.res = res[i]
			}
			p.out <- r
		}
	}
}

// batchedProcesses is one `ps` for every caller waiting.
func (c Compat) batchedProcesses(ctx context.Context) ([]ProcessEntry, error) {
	return c.Batch.table.call(ctx, struct{}{}, func(ctx context.Context, reqs []struct{}) ([][]ProcessEntry, error) {
		rows, err := c.readProcesses(ctx)
		out := make([][]ProcessEntry, len(reqs))
		for i := range out {
			out[i] = rows
		}
		return out, err
	})
}

// signalsScript sends each "SIG PGID" pair's signal with the kill builtin
// (no fork) and prints the pairs it reached a process with.
const signalsScript = `while [ $# -ge 2 ]; do
	kill -s "$1" -- "-$2" 2>/dev/null && printf '%s %s\n' "$1" "$2"
	shift 2
done
exit 0`

// batchedSignal is one command for every signal waiting to be sent.
func (c Compat) batchedSignal(ctx context.Context, pgid int, sig syscall.Signal) (bool, error) {
	return c.Batch.signals.call(ctx, groupSignal{pgid, sig}, func(ctx context.Context, reqs []groupSignal) ([]bool, error) {
		args := make([]string, 0, 2*len(reqs))
		for _, r := range reqs {
			args = append(args, strings.TrimPrefix(SignalName(r.sig), "SIG"), strconv.Itoa(r.pgid))
		}
		res, err := c.Runner.Run(ctx, signalsScript, args, nil)
		if err != nil {
			return nil, fmt.Errorf("signal process groups: %w", err)
		}
		reached := map[string]bool{}
		for _, line := range strings.Split(string(res.Stdout), "\n") {
			reached[line] = true
		}
		out := make([]bool, len(reqs))
		for i := range reqs {
			out[i] = reached[args[2*i]+" "+args[2*i+1]]
		}
		return out, nil
	})
}
