package ui

import (
	"context"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"sandtop/themes"
)

// Options configure the TUI. Only Source is required.
type Options struct {
	// Source is the sandbox to supervise. (Several sandboxes, k9s-style
	// contexts, will arrive as a list of sources; one is shown at a time.)
	Source Source
	// SandboxName is shown in the header; Info's name is used when empty.
	SandboxName string
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
	Cwd string
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
	// ProgramOptions are passed to tea.NewProgram by Run (input, output).
	ProgramOptions []tea.ProgramOption
}

func (o Options) withDefaults() (Options, error) {
	if o.Source == nil {
		return o, fmt.Errorf("ui: Options.Source is required")
	}
	if o.Theme.Name == "" {
		t, err := themes.Load(themes.Default)
		if err != nil {
			return o, err
		}
		o.Theme = t
	}
	if o.Grace <= 0 {
		o.Grace = 5 * time.Second
	}
	if len(o.Shell) == 0 {
		o.Shell = []string{"bash"}
	}
	if o.Now == nil {
		o.Now = time.Now
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
	popts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithContext(ctx), tea.WithFPS(rendererFPS)}
	if opts.Mouse {
		popts = append(popts, tea.WithMouseCellMotion())
	}
	popts = append(popts, opts.ProgramOptions...)
	p := tea.NewProgram(m, popts...)
	_, err = p.Run()
	m.Close()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}
