package seam

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/backend/seam/terminal"
)

// SpawnTerminal starts spec.Argv on a new PTY of spec.Rows x spec.Cols in
// the sandbox and returns once the program owns the terminal: every byte it
// writes, its first prompt included, reaches Output, and nothing of the
// bootstrap does. ctx bounds the allocation only; the Terminal then lives
// until its program exits or Terminate ends it.
func (r *Runtime) SpawnTerminal(ctx context.Context, spec TerminalSpec) (*Terminal, error) {
	if err := terminal.ValidateSpec(spec); err != nil {
		return nil, err
	}
	if err := r.beginSetup(); err != nil {
		return nil, err
	}
	defer r.setups.Done()
	// Disposal aborts allocations in flight, like process spawns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopAbort := context.AfterFunc(r.setupCtx, cancel)
	defer stopAbort()

	rt, err := r.terminalService(ctx)
	if err != nil {
		return nil, err
	}
	t, err := rt.Spawn(ctx, spec)
	if err != nil {
		if r.setupCtx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrDisposing, err)
		}
		return nil, err
	}
	r.ownTerminal(t)
	return t, nil
}

// listTerminals lists the live sandtop terminals in the sandbox, including
// those a previous sandtop process started.
func (r *Runtime) listTerminals(ctx context.Context) ([]TerminalInfo, error) {
	// A listing starts nothing: it needs no control environment, whose
	// probe is a command of its own on stock envd.
	return r.terminalBase().List(ctx)
}

// AttachTerminal returns a handle on a live terminal (a Snapshot's
// TerminalView). Its Output starts with the daemon's replay of recent
// output (what a stock envd cannot replay is lost), then live bytes.
func (r *Runtime) AttachTerminal(ctx context.Context, pid int) (*Terminal, error) {
	if err := r.beginSetup(); err != nil {
		return nil, err
	}
	defer r.setups.Done()
	rt, err := r.terminalService(ctx)
	if err != nil {
		return nil, err
	}
	t, err := rt.Attach(ctx, pid)
	if err != nil {
		return nil, err
	}
	r.ownTerminal(t)
	return t, nil
}

// disposeTerminals terminates every terminal this Runtime spawned or
// attached, and waits for each session to be empty. Failures are reported
// together, and the terminals that failed stay owned for a retry (Dispose
// runs it).
func (r *Runtime) disposeTerminals(ctx context.Context) error {
	set := &r.terms
	set.mu.Lock()
	terms := make([]*Terminal, 0, len(set.live))
	for t := range set.live {
		terms = append(terms, t)
	}
	set.mu.Unlock()
	sort.Slice(terms, func(i, j int) bool { return terms[i].Pid() < terms[j].Pid() })
	errs := make([]error, len(terms))
	var wg sync.WaitGroup
	for i, t := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.Terminate(ctx); err != nil {
				errs[i] = fmt.Errorf("terminal %d: %w", t.Pid(), err)
				return
			}
			set.drop(t)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// terminalService gathers what terminals need from r.
func (r *Runtime) terminalService(ctx context.Context) (*terminal.Service, error) {
	controlEnv, err := r.controlEnvironment(ctx)
	if err != nil {
		return nil, err
	}
	rt := r.terminalBase()
	rt.ControlEnv = controlEnv
	rt.ChildEnv = func(ctx context.Context, explicit map[string]string) ([]string, error) {
		entries := make([]EnvEntry, 0, len(explicit))
		for name, value := range explicit {
			entries = append(entries, SetEnv(name, value))
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		return r.childEnvironment(ctx, entries)
	}
	return rt, nil
}

// terminalBase is the terminal service without what starting needs.
func (r *Runtime) terminalBase() *terminal.Service {
	rt := &terminal.Service{
		Process: r.proc, Plane: r.control, Runner: r.runner, Root: r.cfg.RuntimeRoot,
		Poll: r.cfg.PollInterval, Gone: r.sandboxGone,
	}
	if ext, ok := r.control.(control.Extension); ok {
		rt.Supervisor = ext.Supervisor
	}
	return rt
}

// terminalSet is the terminals one Runtime owns.
type terminalSet struct {
	mu   sync.Mutex
	live map[*Terminal]struct{}
}

// ownedTerminals is the number of terminals the runtime still owns: those whose
// session has not been proven empty.
func (r *Runtime) ownedTerminals() int {
	r.terms.mu.Lock()
	defer r.terms.mu.Unlock()
	return len(r.terms.live)
}

func (s *terminalSet) drop(t *Terminal) {
	s.mu.Lock()
	delete(s.live, t)
	s.mu.Unlock()
}

// ownTerminal keeps t until its session is proven empty. A terminal whose
// program exits is released through Terminate, which also ends whatever
// the program left running in its session; if that fails, the terminal
// stays owned so Dispose can retry.
func (r *Runtime) ownTerminal(t *Terminal) {
	set := &r.terms
	set.mu.Lock()
	set.live[t] = struct{}{}
	set.mu.Unlock()
	go func() {
		<-t.Done()
		if t.Detached() {
			set.drop(t) // it runs on; this runtime no longer answers for it
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*t.Grace()+30*time.Second)
		defer cancel()
		if err := t.Terminate(ctx); err != nil {
			r.log.Warn("terminal release failed; it stays owned", "pid", t.Pid(), "err", err)
			return
		}
		set.drop(t)
	}()
}
