// Package testwait is how a test waits for something another process or
// goroutine does: it polls the condition with a deadline (never sleeps a
// fixed time) and fails the test, saying what it waited for, once the
// deadline passes. The deadline is a bound on a hang, not a timing claim.
package testwait

import (
	"errors"
	"testing"
	"time"
)

// The first pause is short, for what is nearly done; later ones are longer,
// for conditions that cost a process or an RPC to check.
const (
	firstPause = time.Millisecond
	maxPause   = 50 * time.Millisecond
)

// For polls cond until it holds, and fails t if it still does not after
// within.
func For(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	waiting := errors.New("waiting for " + what)
	NoError(t, within, func() error {
		if cond() {
			return nil
		}
		return waiting
	})
}

// NoError polls f until it returns nil, and fails t with f's last error if
// it still does not after within.
func NoError(t testing.TB, within time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := firstPause
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %v", within, err)
			return
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPause)
	}
}
