package e2b

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"
)

// What E2B's control plane knows about a running sandbox besides its
// state: CPU and memory samples, and the sandbox's own logs. Both are
// plain GETs.

// Metric is one CPU/memory/disk sample of a sandbox.
type Metric struct {
	Time       time.Time
	CPUCount   int
	CPUUsedPct float64
	MemUsed    int64 // bytes
	MemTotal   int64
	MemCache   int64
	DiskUsed   int64
	DiskTotal  int64
}

type e2bMetricWire struct {
	TimestampUnix int64   `json:"timestampUnix"`
	CPUCount      int     `json:"cpuCount"`
	CPUUsedPct    float64 `json:"cpuUsedPct"`
	MemUsed       int64   `json:"memUsed"`
	MemTotal      int64   `json:"memTotal"`
	MemCache      int64   `json:"memCache"`
	DiskUsed      int64   `json:"diskUsed"`
	DiskTotal     int64   `json:"diskTotal"`
}

// e2bMetricsWindow is how far back a metrics request reaches: a few
// samples, so the answer stays small however long the sandbox has run.
const e2bMetricsWindow = time.Minute

// LatestMetric is the newest sample of the last minute (ok false when there
// is none yet: E2B needs a few seconds after a start or a resume). E2B
// samples every MetricsInterval; calling more often gains nothing.
func (c *Client) LatestMetric(ctx context.Context, sandboxID string) (Metric, bool, error) {
	if err := checkSandboxID(sandboxID); err != nil {
		return Metric{}, false, err
	}
	q := url.Values{}
	q.Set("start", fmt.Sprint(time.Now().Add(-e2bMetricsWindow).Unix()))
	var samples []e2bMetricWire
	path := "/sandboxes/" + url.PathEscape(sandboxID) + "/metrics?" + q.Encode()
	if _, err := c.do(ctx, http.MethodGet, path, sandboxID, nil, &samples); err != nil {
		return Metric{}, false, err
	}
	if len(samples) == 0 {
		return Metric{}, false, nil
	}
	last := samples[0]
	for _, s := range samples[1:] {
		if s.TimestampUnix >= last.TimestampUnix {
			last = s
		}
	}
	return Metric{
		Time: time.Unix(last.TimestampUnix, 0).UTC(), CPUCount: last.CPUCount, CPUUsedPct: last.CPUUsedPct,
		MemUsed: last.MemUsed, MemTotal: last.MemTotal, MemCache: last.MemCache,
		DiskUsed: last.DiskUsed, DiskTotal: last.DiskTotal,
	}, true, nil
}

// LogEntry is one line of a sandbox's own log (envd and the sandbox
// runtime, as E2B collects them).
type LogEntry struct {
	Time    time.Time         `json:"timestamp"`
	Level   string            `json:"level"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// MaxLogLines is the most one logs request returns.
const MaxLogLines = 1000

// Logs returns the newest limit entries (1..E2BMaxLogLines) of a sandbox's
// log, oldest first: GET /v2/sandboxes/{id}/logs read backwards.
func (c *Client) Logs(ctx context.Context, sandboxID string, limit int) ([]LogEntry, error) {
	if err := checkSandboxID(sandboxID); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxLogLines {
		return nil, fmt.Errorf("e2b: logs: limit %d is not between 1 and %d", limit, MaxLogLines)
	}
	q := url.Values{}
	q.Set("limit", fmt.Sprint(limit))
	q.Set("direction", "backward")
	var answer struct {
		Logs []LogEntry `json:"logs"`
	}
	path := "/v2/sandboxes/" + url.PathEscape(sandboxID) + "/logs?" + q.Encode()
	if _, err := c.do(ctx, http.MethodGet, path, sandboxID, nil, &answer); err != nil {
		return nil, err
	}
	out := answer.Logs
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}
