package e2b

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Backing off from a control plane that says it is overloaded (429, 5xx)
// or cannot be reached: the caller that watches a whole fleet waits, with
// jitter so that many clients do not come back in step, and can say so.

// ThrottledError is a failure worth retrying later: 429, a 5xx, or the
// control plane out of reach (Status 0). It wraps the readable error.
type ThrottledError struct {
	Status int
	// RetryAfter is what the server asked for (Retry-After); 0 when it
	// did not say.
	RetryAfter time.Duration
	err        error
}

func (e *ThrottledError) Error() string { return e.err.Error() }
func (e *ThrottledError) Unwrap() error { return e.err }

// throttling says whether a status means "come back later".
func throttling(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Backoff defaults: the first wait is about BackoffBase, doubling per
// failure up to BackoffMax.
const (
	BackoffBase = 2 * time.Second
	BackoffMax  = 2 * time.Minute
)

// Backoff remembers consecutive throttled failures and when the next
// request may go. It is safe for concurrent use.
type Backoff struct {
	// Base and Max override the defaults when set (tests).
	Base, Max time.Duration

	mu     sync.Mutex
	fails  int
	until  time.Time
	reason string
	total  int // failures seen since the start, for display
}

// Fail records err. It reports whether err is a throttling failure (and
// the backoff now runs); other errors leave the backoff as it was.
func (b *Backoff) Fail(err error, now time.Time) bool {
	var te *ThrottledError
	if !errors.As(err, &te) {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	base, ceiling := b.Base, b.Max
	if base <= 0 {
		base = BackoffBase
	}
	if ceiling <= 0 {
		ceiling = BackoffMax
	}
	d := base << min(b.fails, 16)
	d = min(d, ceiling)
	// Equal jitter: half fixed, half random, so waits stay near the
	// schedule but clients spread out.
	d = d/2 + rand.N(d/2+1)
	d = max(d, te.RetryAfter)
	b.fails++
	b.total++
	b.until = now.Add(d)
	switch te.Status {
	case 0:
		b.reason = "unreachable"
	case http.StatusTooManyRequests:
		b.reason = "429 rate limited"
	default:
		b.reason = strconv.Itoa(te.Status) + " " + http.StatusText(te.Status)
	}
	return true
}

// OK records a success: the next failure starts from the base again.
func (b *Backoff) OK() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails, b.until, b.reason = 0, time.Time{}, ""
}

// Waiting says how long requests must still wait and why; 0 when they may
// go now.
func (b *Backoff) Waiting(now time.Time) (time.Duration, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !now.Before(b.until) {
		return 0, b.reason
	}
	return b.until.Sub(now), b.reason
}

// Failures counts the throttled failures seen so far.
func (b *Backoff) Failures() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
