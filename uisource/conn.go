package uisource

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Reconnection backoff: the model asks to watch again after a loss; while
// the sandbox stays unreachable each attempt waits longer before it dials.
const (
	backoffFirst = 500 * time.Millisecond
	backoffMax   = 15 * time.Second
)

// lossTracker remembers connection losses for backoff and for Err.
type lossTracker struct {
	mu       sync.Mutex
	failures int
	err      error
	retryAt  time.Time
}

// lost records a failed or broken watch.
func (c *lossTracker) lost(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures++
	c.err = err
	d := backoffFirst << min(c.failures-1, 5)
	c.retryAt = time.Now().Add(min(d, backoffMax))
}

// up records a watch that delivered a table.
func (c *lossTracker) up() {
	c.mu.Lock()
	c.failures, c.err, c.retryAt = 0, nil, time.Time{}
	c.mu.Unlock()
}

// wait sleeps out the backoff, if any.
func (c *lossTracker) wait(ctx context.Context) error {
	c.mu.Lock()
	d := time.Until(c.retryAt)
	c.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *lossTracker) lastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Err is the error of the last connection loss, nil once a watch works
// again. (Source.Watch's contract names it; the model may ask for it
// through an interface assertion.)
func (s *backendSource) Err() error { return s.conn.lastErr() }

// lossError words a lost connection for the event log.
func (s *backendSource) lossError(err error, gone bool) error {
	if gone {
		return fmt.Errorf("sandbox %s is gone or unreachable (%v); its groups are shown as settled", s.label(), err)
	}
	return fmt.Errorf("connection to %s lost: %w", s.label(), err)
}

func (s *backendSource) label() string {
	if s.opts.Name != "" {
		return s.opts.Name
	}
	return s.opts.Target
}
