package ui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/key"
)

// KeyMap is the one keymap: every binding the UI reacts to, also the source
// of the help screen and the footer hints.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextPane, PrevPane                      key.Binding
	Collapse, Expand                        key.Binding
	Open                                    key.Binding // attach a terminal, focus a group's output
	Mark, ClearMarks                        key.Binding
	Signal, Teardown, BulkTeardown          key.Binding
	Filter, Palette, Help                   key.Binding
	Contexts                                key.Binding // the sandbox picker
	// Resume, Extend and SandboxLogs act on an E2B sandbox's provider.
	Resume, Extend, SandboxLogs    key.Binding
	Run, NewTerminal               key.Binding
	Follow, SearchNext, SearchPrev key.Binding
	Zoom, Back, Quit               key.Binding
	// The output pane: wrap or scroll sideways, arrival times, copy (OSC
	// 52) and save.
	Wrap, Timestamps, Copy, Save key.Binding
	// Sort the groups, htop-style; the same key again reverses.
	SortCPU, SortRSS, SortAge, SortPGID, SortState key.Binding
	// Detach leaves an attached terminal. Every other key goes to the
	// remote program while attached, Ctrl-C included.
	Detach key.Binding
}

// DefaultKeyMap returns the built-in bindings.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:           b("↑/k", "up", "up", "k"),
		Down:         b("↓/j", "down", "down", "j"),
		PageUp:       b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown:     b("pgdn", "page down", "pgdown", "ctrl+f"),
		Top:          b("g", "top", "g", "home"),
		Bottom:       b("G", "bottom", "G", "end"),
		NextPane:     b("tab", "next pane", "tab"),
		PrevPane:     b("shift+tab", "previous pane", "shift+tab"),
		Collapse:     b("←/h", "collapse", "left", "h"),
		Expand:       b("→/l", "expand", "right", "l"),
		Open:         b("enter", "attach / output", "enter"),
		Mark:         b("space", "mark", " "),
		ClearMarks:   b("U", "clear marks", "U"),
		Signal:       b("s", "signal", "s"),
		Teardown:     b("x", "tear down", "x"),
		BulkTeardown: b("X", "tear down marked", "X"),
		Filter:       b("/", "filter", "/"),
		Palette:      b(":", "commands", ":"),
		Contexts:     b("c", "sandboxes (:ctx)", "c"),
		Resume:       b("R", "resume sandbox (E2B)", "R"),
		Extend:       b("E", "extend sandbox (E2B)", "E"),
		SandboxLogs:  b("L", "sandbox log (E2B)", "L"),
		Help:         b("?", "help", "?"),
		Run:          b("r", "run", "r"),
		NewTerminal:  b("t", "terminal", "t"),
		Follow:       b("f", "follow (the newest output)", "f"),
		SearchNext:   b("n", "next match", "n"),
		SearchPrev:   b("N", "previous match", "N"),
		Zoom:         b("z", "zoom detail pane", "z"),
		Back:         b("esc", "back", "esc"),
		Quit:         b("q", "quit (remote work keeps running)", "q", "ctrl+c"),
		Detach:       b("ctrl+]", "detach", "ctrl+]"),
		Wrap:         b("w", "wrap (off: ←/→ scroll sideways)", "w"),
		Timestamps:   b("T", "timestamps", "T"),
		Copy:         b("y", "copy (the visible lines, through OSC 52)", "y"),
		Save:         b("ctrl+s", "save (all output, to a file)", "ctrl+s"),
		SortCPU:      b("P", "sort by CPU", "P"),
		SortRSS:      b("M", "sort by memory (RSS)", "M"),
		SortAge:      b("A", "sort by age", "A"),
		SortPGID:     b("I", "sort by pgid", "I"),
		SortState:    b("S", "sort by state", "S"),
	}
}

// bindings maps configuration names to the bindings, for overrides.
func (k *KeyMap) bindings() map[string]*key.Binding {
	return map[string]*key.Binding{
		"up": &k.Up, "down": &k.Down, "page_up": &k.PageUp, "page_down": &k.PageDown,
		"top": &k.Top, "bottom": &k.Bottom, "next_pane": &k.NextPane, "prev_pane": &k.PrevPane,
		"collapse": &k.Collapse, "expand": &k.Expand, "open": &k.Open, "mark": &k.Mark,
		"clear_marks": &k.ClearMarks, "signal": &k.Signal, "teardown": &k.Teardown,
		"bulk_teardown": &k.BulkTeardown, "filter": &k.Filter, "palette": &k.Palette, "contexts": &k.Contexts,
		"resume": &k.Resume, "extend": &k.Extend, "sandbox_logs": &k.SandboxLogs,
		"help": &k.Help, "run": &k.Run, "new_terminal": &k.NewTerminal, "follow": &k.Follow,
		"search_next": &k.SearchNext, "search_prev": &k.SearchPrev, "zoom": &k.Zoom,
		"back": &k.Back, "quit": &k.Quit, "detach": &k.Detach,
		"wrap": &k.Wrap, "timestamps": &k.Timestamps, "copy": &k.Copy, "save": &k.Save,
		"sort_cpu": &k.SortCPU, "sort_rss": &k.SortRSS, "sort_age": &k.SortAge, "sort_pgid": &k.SortPGID,
		"sort_state": &k.SortState,
	}
}

// ActionNames lists the names Apply accepts.
func (k KeyMap) ActionNames() []string {
	var names []string
	for n := range k.bindings() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Apply replaces the keys of the named actions, e.g. {"detach": {"ctrl+g"}}.
// Keys are single keys as Bubble Tea names them ("ctrl+g", "f2", "alt+x");
// chords such as "ctrl+a d" are not supported.
func (k *KeyMap) Apply(overrides map[string][]string) error {
	all := k.bindings()
	for name, keys := range overrides {
		b, ok := all[name]
		if !ok {
			return fmt.Errorf("keymap: unknown action %q (have %s)", name, strings.Join(k.ActionNames(), ", "))
		}
		if len(keys) == 0 {
			return fmt.Errorf("keymap: action %q needs at least one key", name)
		}
		b.SetKeys(keys...)
		b.SetHelp(strings.Join(keys, "/"), b.Help().Desc)
	}
	return nil
}

// helpSections groups the bindings for the help screen.
func (k KeyMap) helpSections() []helpSection {
	return []helpSection{
		{"Navigate", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.NextPane, k.PrevPane, k.Collapse, k.Expand, k.Zoom}},
		{"Act", []key.Binding{k.Open, k.Run, k.NewTerminal, k.Signal, k.Teardown, k.Mark, k.BulkTeardown, k.ClearMarks}},
		{"Find", []key.Binding{k.Filter, k.SearchNext, k.SearchPrev, k.Follow, k.Palette, k.Contexts}},
		{"Sandbox (E2B)", []key.Binding{k.Resume, k.Extend, k.SandboxLogs}},
		{"Output", []key.Binding{k.Wrap, k.Timestamps, k.Copy, k.Save}},
		{"Sort", []key.Binding{k.SortCPU, k.SortRSS, k.SortAge, k.SortPGID, k.SortState}},
		{"General", []key.Binding{k.Detach, k.Back, k.Help, k.Quit}},
	}
}

type helpSection struct {
	title    string
	bindings []key.Binding
}
