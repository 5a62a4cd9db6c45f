package testwait

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the failure and stops
// the goroutine, as the real one does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	r := &recorder{TB: t}
	calls := 0
	For(r, 10*time.Second, "the third call", func() bool { calls++; return calls == 3 })
	if r.failed != "" || calls != 3 {
		t.Fatalf("failed %q after %d calls, want success on the third", r.failed, calls)
	}
}

func TestForFailsAfterTheDeadlineSayingWhat(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	For(r, 30*time.Millisecond, "never", func() bool { return false })
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("gave up after %s, before the deadline", took)
	}
	if !strings.Contains(r.failed, "timed out after 30ms: waiting for never") {
		t.Fatalf("failure %q", r.failed)
	}
}

func TestNoErrorReportsTheLastError(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	NoError(r, 20*time.Millisecond, func() error { n++; return fmt.Errorf("attempt %d: %w", n, errors.ErrUnsupported) })
	if want := fmt.Sprintf("attempt %d:", n); !strings.Contains(r.failed, want) {
		t.Fatalf("failure %q, want the last error (%s)", r.failed, want)
	}
}

func TestValueReturnsWhatTheLastCallReturned(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	got := Value(r, 10*time.Second, func() (int, error) {
		n++
		if n < 3 {
			return n, fmt.Errorf("only %d", n)
		}
		return n * 10, nil
	})
	if r.failed != "" || got != 30 {
		t.Fatalf("failed %q, got %d; want 30 from the third call", r.failed, got)
	}
}

func TestValueFailsWithTheLastError(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	Value(r, 20*time.Millisecond, func() (string, error) { n++; return "", fmt.Errorf("screen %d", n) })
	if want := fmt.Sprintf("timed out after 20ms: screen %d", n); r.failed != want {
		t.Fatalf("failure %q, want %q", r.failed, want)
	}
}
