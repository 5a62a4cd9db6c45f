package ui

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/config"
	"sandtop/themes"
)

// Options configure the TUI. Either Source (one sandbox) or Sandboxes
// (several) is required.
type Options struct {
	// Source is the sandbox to supervise when there is only one.
	Source Source
	// SandboxName is shown in the header; Info's name is used when empty.
	SandboxName string
	// Sandboxes are several sandboxes, k9s-style: one is shown at a time,
	// ":ctx" or c switches. Initial is the index of the one shown first.
	// Give either Source or Sandboxes.
	Sandboxes []SandboxSpec
	Initial   int
	// Arrivals, when set, brings sandboxes that appear while the TUI
	// runs (a pod created after start): each is added to the sandboxes,
	// counted in the fleet view like the first ones. A name already shown
	// means a new sandbox of that name (a pod re-created): it replaces the
	// old one once the old one's provider says it is gone, so send a name
	// again only for that. The TUI stops reading when it closes.
	Arrivals <-chan SandboxSpec
	// Theme colours the UI and the terminal pane; the zero Theme means
	// themes.Default.
	Theme Theme
	// ReadOnly refuses every mutation: spawn, signal, teardown, input, paste.
	ReadOnly bool
	// Mouse turns on mouse support (wheel scrolling, click to select).
	// Off leaves the terminal's own text selection working.
	Mouse bool
	// Keys overrides bindings by action name, e.g. {"detach": {"ctrl+g"}};
	// see KeyMap.ActionNames.
	Keys map[string][]string
	// Grace is how long a teardown waits between SIGTERM and SIGKILL;
	// zero means 5 s.
	Grace time.Duration
	// Shell is what :term starts when given no argv; nil means ["bash"].
	Shell []string
	// Cwd is the working directory for :run; empty means the daemon's.
	// With Sandboxes, each SandboxSpec has its own.
	Cwd string
	// ScrollbackBytes bounds the output kept per pane: a terminal's raw
	// byte ring and a group's output lines; zero means 1 MiB.
	ScrollbackBytes int
	// NoConfirm turns confirmations off, one action at a time. The zero
	// value confirms everything destructive.
	NoConfirm NoConfirm
	// ProviderRefresh and MetricsRefresh are how often a sandbox's provider
	// (Context.Plane) is asked for its state and end time, and for CPU and
	// memory; zero means DefaultPlaneRefresh and DefaultMetricsRefresh
	// (E2B samples metrics every 5 s, so asking more often gains nothing).
	// Tests shorten them to cover many refreshes quickly.
	ProviderRefresh, MetricsRefresh time.Duration
	// Warnings are shown in the event log at start (an API key of an
	// unusual shape, say).
	Warnings []string
	// KeepTerminalSize leaves an attached terminal at the size the attach
	// gave it; by default detaching gives it back its previous size.
	KeepTerminalSize bool
	// Tmux, when sandtop runs inside tmux, also puts a copy in tmux's
	// paste buffer (TmuxBuffer); nil sends copies by OSC 52 alone.
	Tmux func(text string) error
	// ExportDir is where a save goes unless the operator names an absolute
	// path; empty means a sandtop-exports directory in the temp dir.
	ExportDir string
	// Logger receives the TUI's debug log (--log-file); nil drops it.
	Logger *slog.Logger
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
	// Tick is how the model waits: it returns a command that delivers
	// fn's message after d. nil means tea.Tick; tests give their own so
	// that no test waits for the wall clock.
	Tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
	// ProgramOptions are passed to tea.NewProgram by Run (input, output).
	ProgramOptions []tea.ProgramOption
}

// NoConfirm lists the confirmations an operator has explicitly turned
// off (config [confirm] ... = false). SIGKILL from the signal menu always
// asks, and a bulk teardown always shows what it will tear down.
type NoConfirm struct {
	// Signal sends signals from the menu at once (SIGKILL still asks).
	Signal bool
	// Teardown tears a single group down without asking.
	Teardown bool
	// BulkTeardown confirms the marked groups' preview with enter instead
	// of their typed count.
	BulkTeardown bool
}

func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Source != nil && len(o.Sandboxes) > 0:
		return o, fmt.Errorf("ui: give Options.Source or Options.Sandboxes, not both")
	case o.Source != nil:
		o.Sandboxes = []SandboxSpec{{Name: o.SandboxName, Source: o.Source, Cwd: o.Cwd}}
		o.Initial = 0
	case len(o.Sandboxes) == 0:
		return o, fmt.Errorf("ui: Options.Source or Options.Sandboxes is required")
	}
	if o.Initial < 0 || o.Initial >= len(o.Sandboxes) {
		return o, fmt.Errorf("ui: Options.Initial %d is not one of the %d sandboxes", o.Initial, len(o.Sandboxes))
	}
	seen := map[string]bool{}
	for i, c := range o.Sandboxes {
		if len(o.Sandboxes) > 1 && c.Name == "" {
			return o, fmt.Errorf("ui: sandbox %d has no name", i+1)
		}
		if seen[c.Name] {
			return o, fmt.Errorf("ui: two sandboxes are named %q", c.Name)
		}
		seen[c.Name] = true
	}
	if o.ScrollbackBytes <= 0 {
		o.ScrollbackBytes = 1 << 20
	}
	if o.Theme.Name == "" {
		t, err := themes.Load(themes.Default)
		if err != nil {
			return o, err
		}
		o.Theme = t
	}
	if o.Grace <= 0 {
		o.Grace = config.DefaultGrace
	}
	if len(o.Shell) == 0 {
		o.Shell = []string{"bash"}
	}
	if o.ExportDir == "" {
		o.ExportDir = filepath.Join(os.TempDir(), "sandtop-exports")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == nil {
		o.Tick = tea.Tick
	}
	if o.ProviderRefresh <= 0 {
		o.ProviderRefresh = DefaultProviderRefresh
	}
	if o.MetricsRefresh <= 0 {
		o.MetricsRefresh = DefaultMetricsRefresh
	}
	return o, nil
}

// rendererFPS caps Bubble Tea's own flush ticker. Output frames are
// coalesced at ~30 fps anyway, and the renderer's default 60 Hz ticker is
// most of what an idle sandtop costs.
const rendererFPS = 30

// Run shows the TUI until the operator quits or ctx ends. Quitting detaches
// from everything and signals nothing: remote processes keep running.
func Run(ctx context.Context, opts Options) error {
	m, err := New(opts)
	if err != nil {
		return err
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(rendererFPS)}
	popts = append(popts, opts.ProgramOptions...)
	p := tea.NewProgram(m, popts...)
	_, err = p.Run()
	m.Close()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}
