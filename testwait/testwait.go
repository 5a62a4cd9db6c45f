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
// it still does not after within: an error that says what f last saw (a
// screen, a state) is the failure's explanation.
func NoError(t testing.TB, within time.Duration, f func() error) {
	t.Helper()
	Value(t, within, func() (struct{}, error) { return struct{}{}, f() })
}

// Value polls f until it returns a nil error, and returns the value it
// returned then; it fails t with f's last error if that does not happen
// within.
func Value[T any](t testing.TB, within time.Duration, f func() (T, error)) T {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := firstPause
	for {
		v, err := f()
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s: %v", within, err)
			return v
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPause)
	}
}
