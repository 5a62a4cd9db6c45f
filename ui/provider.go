package ui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"sandtop/safetext"
)

// Provider is what a sandbox's provider (E2B) knows and does besides
// the daemon inside it: the sandbox's state, end time, metrics and logs,
// and the two lifecycle actions. Describe, Metrics and Logs only look;
// Resume and Extend are the only calls that change anything, and the TUI
// makes them only on a confirmed operator action.
type Provider interface {
	Describe(ctx context.Context) (ProviderInfo, error)
	// Metrics is the newest CPU/memory sample; ok is false while there is
	// none yet.
	Metrics(ctx context.Context) (m ProviderMetrics, ok bool, err error)
	// Logs are the sandbox's newest log lines, oldest first.
	Logs(ctx context.Context, limit int) ([]ProviderLogLine, error)
	// Resume wakes a paused sandbox for timeout (0: the provider default).
	Resume(ctx context.Context, timeout time.Duration) error
	// Extend makes a running sandbox live timeout from now.
	Extend(ctx context.Context, timeout time.Duration) error
	// DefaultTimeout is how long a resume or an extend makes the sandbox
	// live when the operator names no duration: the provider's default.
	DefaultTimeout() time.Duration
}

// ProviderBackoff is what a Provider may also say: that it waits before
// asking its provider again (after a 429 or a 5xx), how long and why.
type ProviderBackoff interface {
	Backoff() (wait time.Duration, reason string)
}

// SharedBackoff is a PlaneBackoff whose backoff is its provider's, shared
// with every sandbox of that provider: BackoffOwner returns the provider
// (a comparable value, such as a pointer), which is asked once.
type SharedBackoff interface {
	BackoffOwner() ProviderBackoff
}

// ErrSandboxGone, wrapped in a Provider's error, says the provider no
// longer knows the sandbox (killed or expired): retrying cannot help.
var ErrSandboxGone = errors.New("sandbox is gone")

// ProviderInfo is a sandbox as its provider describes it.
type ProviderInfo struct {
	ID, Template, Alias string
	State               string // "running" or "paused"
	StartedAt, EndAt    time.Time
	Metadata            map[string]string
}

// Paused says nothing runs in the sandbox until it is resumed.
func (p ProviderInfo) Paused() bool { return p.State == "paused" }

// ProviderMetrics is one CPU/memory sample.
type ProviderMetrics struct {
	At                time.Time
	CPUCount          int
	CPUPct            float64
	MemUsed, MemTotal int64
}

// ProviderLogLine is one line of the sandbox's own log.
type ProviderLogLine struct {
	At      time.Time
	Level   string
	Message string
}

// Default refresh periods of the control plane: the state and end time are
// re-read every DefaultProviderRefresh (the countdown ticks locally between),
// metrics as often as E2B samples them.
const (
	DefaultProviderRefresh = 15 * time.Second
	DefaultMetricsRefresh  = 5 * time.Second
)

// timeLeftWarning is when the countdown of a sandbox's end turns to a
// warning.
const timeLeftWarning = 2 * time.Minute

// FormatTimeLeft is a countdown: 58s, 4m05s, 1h12m, or "expired".
func FormatTimeLeft(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// fleetTimeLeft is FormatTimeLeft for a row of the fleet view: whole
// minutes while ten or more are left (a thousand rows that count seconds
// change every frame), seconds once the end is near.
func fleetTimeLeft(d time.Duration) string {
	if d < 10*time.Minute || d >= time.Hour {
		return FormatTimeLeft(d)
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}

// FormatMetadata is "k=v,k2=v2" in key order, or "-" when empty.
func FormatMetadata(md map[string]string) string {
	if len(md) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + md[k]
	}
	return safetext.Line(strings.Join(parts, ","))
}

// templateName is the alias when the template has one, else its id.
func (p ProviderInfo) templateName() string {
	if p.Alias != "" {
		return p.Alias
	}
	return p.Template
}

// endText is a paused sandbox's end time, which does not count down while
// it sleeps: "ends Jun 2 08:00 UTC".
func (p ProviderInfo) endText() string {
	if p.EndAt.IsZero() {
		return "no end time"
	}
	return "ends " + p.EndAt.UTC().Format("Jan 2 15:04 UTC")
}

// formatMetrics is "cpu 12% mem 210M/512M".
func formatMetrics(m ProviderMetrics) string {
	return fmt.Sprintf("cpu %.0f%% mem %s/%s", m.CPUPct, formatBytes(uint64(max(m.MemUsed, 0))), formatBytes(uint64(max(m.MemTotal, 0))))
}
