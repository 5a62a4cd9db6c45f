package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sandtop/backend/e2b"
	"sandtop/ui"
)

// e2bPlane shows one E2B sandbox's control plane to the TUI. Describe,
// Metrics and Logs are GETs; Resume and Extend run only on a confirmed
// action.
type e2bPlane struct {
	c  *e2b.Client
	id string
}

// planeErr marks E2B's "sandbox not found" as the TUI's ErrSandboxGone.
func planeErr(err error) error {
	if errors.Is(err, e2b.ErrSandboxGone) {
		return fmt.Errorf("%w: %w", ui.ErrSandboxGone, err)
	}
	return err
}

func (p e2bPlane) DefaultTimeout() time.Duration { return e2b.DefaultConnectTimeout }

func (p e2bPlane) Describe(ctx context.Context) (ui.PlaneInfo, error) {
	sb, err := p.c.Get(ctx, p.id)
	if err != nil {
		return ui.PlaneInfo{}, planeErr(err)
	}
	return planeInfo(sb), nil
}

func (p e2bPlane) Metrics(ctx context.Context) (ui.PlaneMetrics, bool, error) {
	m, ok, err := p.c.LatestMetric(ctx, p.id)
	if err != nil || !ok {
		return ui.PlaneMetrics{}, ok, planeErr(err)
	}
	return ui.PlaneMetrics{At: m.Time, CPUCount: m.CPUCount, CPUPct: m.CPUUsedPct, MemUsed: m.MemUsed, MemTotal: m.MemTotal}, true, nil
}

func (p e2bPlane) Logs(ctx context.Context, limit int) ([]ui.PlaneLogLine, error) {
	entries, err := p.c.Logs(ctx, p.id, min(max(limit, 1), e2b.MaxLogLines))
	if err != nil {
		return nil, planeErr(err)
	}
	out := make([]ui.PlaneLogLine, len(entries))
	for i, e := range entries {
		out[i] = ui.PlaneLogLine{At: e.Time, Level: e.Level, Message: e.Message}
	}
	return out, nil
}

func (p e2bPlane) Resume(ctx context.Context, timeout time.Duration) error {
	_, err := p.c.Resume(ctx, p.id, timeout)
	return planeErr(err)
}

func (p e2bPlane) Extend(ctx context.Context, timeout time.Duration) error {
	return planeErr(p.c.Extend(ctx, p.id, timeout))
}

func planeInfo(sb e2b.Sandbox) ui.PlaneInfo {
	return ui.PlaneInfo{ID: sb.ID, Template: sb.TemplateID, Alias: sb.Alias, State: sb.State,
		StartedAt: sb.StartedAt, EndAt: sb.EndAt, Metadata: sb.Metadata}
}
