package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sandtop/backend/target"
)

// envdPool bounds the envd connections the TUI holds for a fleet. A
// sandbox's summary borrows a connection for one snapshot; the sandbox on
// screen pins its connection for as long as the TUI shows it. Unpinned
// connections idle for longer than idle are closed, and the least recently
// used one makes room when max are open.
type envdPool struct {
	max  int
	idle time.Duration
	now  func() time.Time

	mu      sync.Mutex
	entries map[string]*poolEntry
	stop    chan struct{}
	stopped bool
	wg      sync.WaitGroup
}

type poolEntry struct {
	s        *target.Connection
	ready    chan struct{} // closed once the dial ended
	err      error
	users    int
	pinned   bool
	lastUsed time.Time
}

// Defaults: at most 64 connections, each closed after 30 s unused (the
// sandboxes on screen refresh every 10 s, so theirs stay open).
const (
	poolMax  = 64
	poolIdle = 30 * time.Second
)

// errPoolFull says every connection is in use; the caller tries later.
var errPoolFull = errors.New("every envd connection of the pool is in use")

func newEnvdPool(maxOpen int, idle time.Duration) *envdPool {
	p := &envdPool{max: maxOpen, idle: idle, now: time.Now, entries: map[string]*poolEntry{}, stop: make(chan struct{})}
	p.wg.Add(1)
	go p.reap()
	return p
}

// reap closes idle connections even when nothing asks the pool for one.
func (p *envdPool) reap() {
	defer p.wg.Done()
	t := time.NewTicker(max(p.idle/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.closeIdleLocked()
			p.mu.Unlock()
		}
	}
}

func (p *envdPool) closeIdleLocked() {
	now := p.now()
	for k, e := range p.entries {
		if e.users == 0 && !e.pinned && isReady(e) && now.Sub(e.lastUsed) >= p.idle {
			p.dropLocked(k, e)
		}
	}
}

func isReady(e *poolEntry) bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

func (p *envdPool) dropLocked(k string, e *poolEntry) {
	delete(p.entries, k)
	if e.s != nil {
		e.s.Close()
	}
}

// acquire borrows key's connection, dialling it when none is open. release
// gives it back; broken (true) closes it, for a connection whose call failed.
func (p *envdPool) acquire(ctx context.Context, key string, pin bool, dial func(context.Context) (*target.Connection, error)) (*target.Connection, func(broken bool), error) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil, nil, errors.New("the TUI is closing")
	}
	e, ok := p.entries[key]
	if !ok {
		if len(p.entries) >= p.max && !p.evictLocked() {
			p.mu.Unlock()
			return nil, nil, fmt.Errorf("%w (%d open)", errPoolFull, p.max)
		}
		e = &poolEntry{ready: make(chan struct{})}
		p.entries[key] = e
		e.users++
		p.mu.Unlock()
		s, err := dial(ctx)
		p.mu.Lock()
		e.s, e.err = s, err
		close(e.ready)
		if err != nil {
			e.users--
			if p.entries[key] == e {
				delete(p.entries, key)
			}
			p.mu.Unlock()
			return nil, nil, err
		}
		if p.stopped {
			s.Close()
			p.mu.Unlock()
			return nil, nil, errors.New("the TUI is closing")
		}
	} else {
		e.users++
		p.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			p.mu.Lock()
			e.users--
			p.mu.Unlock()
			return nil, nil, ctx.Err()
		}
		p.mu.Lock()
		if e.err != nil {
			e.users--
			p.mu.Unlock()
			return nil, nil, e.err
		}
	}
	e.pinned = e.pinned || pin
	e.lastUsed = p.now()
	p.mu.Unlock()
	var once sync.Once
	release := func(broken bool) {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			e.users--
			e.lastUsed = p.now()
			if broken && !e.pinned && e.users == 0 && p.entries[key] == e {
				p.dropLocked(key, e)
			}
		})
	}
	return e.s, release, nil
}

// evictLocked closes the least recently used idle connection.
func (p *envdPool) evictLocked() bool {
	var oldestKey string
	var oldest *poolEntry
	for k, e := range p.entries {
		if e.users > 0 || e.pinned || !isReady(e) {
			continue
		}
		if oldest == nil || e.lastUsed.Before(oldest.lastUsed) {
			oldestKey, oldest = k, e
		}
	}
	if oldest == nil {
		return false
	}
	p.dropLocked(oldestKey, oldest)
	return true
}

// open counts the connections open now.
func (p *envdPool) open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// closeAll drops every connection; nothing in the sandboxes is signalled.
func (p *envdPool) closeAll() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	close(p.stop)
	for k, e := range p.entries {
		if isReady(e) {
			p.dropLocked(k, e)
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}
