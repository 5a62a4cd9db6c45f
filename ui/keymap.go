package ui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is the one keymap: every binding the UI reacts to. The action
// table (actions.go) says what each does, where, and in which help
// section and footer it shows.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextPane, PrevPane                      key.Binding
	Collapse, Expand                        key.Binding
	Open                                    key.Binding // attach a terminal, focus a group's output
	Mark, ClearMarks                        key.Binding
	Signal, Teardown, BulkTeardown          key.Binding
	Filter, Palette, Help                   key.Binding
	Sandboxes                               key.Binding // the sandbox picker
	// Resume, Extend and SandboxLogs act on an E2B sandbox's provider.
	Resume, Extend, SandboxLogs    key.Binding
	Run, NewTerminal               key.Binding
	Describe                       key.Binding // a group's full facts
	Follow, SearchNext, SearchPrev key.Binding
	Zoom, Back, Quit               key.Binding
	// The output pane: wrap or scroll sideways, arrival times, copy (OSC
	// 52) and save.
	Wrap, Timestamps, Copy, Save key.Binding
	// Sort the groups, htop-style; the same key again reverses.
	SortCPU, SortRSS, SortAge, SortPGID, SortState key.Binding
	// Worst puts the fleet view's worst sandboxes first (stuck, waiting).
	Worst key.Binding
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
		Mark:         b("space", "mark", "space"),
		ClearMarks:   b("U", "clear marks", "U"),
		Signal:       b("s", "signal", "s"),
		Teardown:     b("x", "tear down", "x"),
		BulkTeardown: b("X", "tear down marked", "X"),
		Filter:       b("/", "filter", "/"),
		Palette:      b(":", "commands", ":"),
		Sandboxes:    b("c", "sandboxes (:ctx)", "c"),
		Resume:       b("R", "resume sandbox (E2B)", "R"),
		Extend:       b("E", "extend sandbox (E2B)", "E"),
		SandboxLogs:  b("L", "sandbox log (E2B)", "L"),
		Help:         b("?", "help", "?"),
		Run:          b("r", "run", "r"),
		Describe:     b("d", "describe (full command, state dir, members)", "d"),
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
		Copy:         b("y", "copy (the visible lines, to the clipboard by OSC 52)", "y"),
		Save:         b("ctrl+s", "save (all output, to a file)", "ctrl+s"),
		SortCPU:      b("P", "sort by CPU", "P"),
		SortRSS:      b("M", "sort by memory (RSS)", "M"),
		SortAge:      b("A", "sort by age", "A"),
		SortPGID:     b("I", "sort by pgid", "I"),
		SortState:    b("S", "sort by state", "S"),
		Worst:        b("W", "worst first (sandboxes)", "W"),
	}
}

// keyFields maps configuration names to the keymap's fields, for
// overrides and for the action table.
var keyFields = map[string]func(*KeyMap) *key.Binding{
	"up": func(k *KeyMap) *key.Binding { return &k.Up }, "down": func(k *KeyMap) *key.Binding { return &k.Down },
	"page_up": func(k *KeyMap) *key.Binding { return &k.PageUp }, "page_down": func(k *KeyMap) *key.Binding { return &k.PageDown },
	"top": func(k *KeyMap) *key.Binding { return &k.Top }, "bottom": func(k *KeyMap) *key.Binding { return &k.Bottom },
	"next_pane": func(k *KeyMap) *key.Binding { return &k.NextPane }, "prev_pane": func(k *KeyMap) *key.Binding { return &k.PrevPane },
	"collapse": func(k *KeyMap) *key.Binding { return &k.Collapse }, "expand": func(k *KeyMap) *key.Binding { return &k.Expand },
	"open": func(k *KeyMap) *key.Binding { return &k.Open }, "mark": func(k *KeyMap) *key.Binding { return &k.Mark },
	"clear_marks": func(k *KeyMap) *key.Binding { return &k.ClearMarks }, "signal": func(k *KeyMap) *key.Binding { return &k.Signal },
	"teardown": func(k *KeyMap) *key.Binding { return &k.Teardown }, "bulk_teardown": func(k *KeyMap) *key.Binding { return &k.BulkTeardown },
	"filter": func(k *KeyMap) *key.Binding { return &k.Filter }, "palette": func(k *KeyMap) *key.Binding { return &k.Palette },
	"contexts": func(k *KeyMap) *key.Binding { return &k.Sandboxes }, "resume": func(k *KeyMap) *key.Binding { return &k.Resume },
	"extend": func(k *KeyMap) *key.Binding { return &k.Extend }, "sandbox_logs": func(k *KeyMap) *key.Binding { return &k.SandboxLogs },
	"help": func(k *KeyMap) *key.Binding { return &k.Help }, "run": func(k *KeyMap) *key.Binding { return &k.Run },
	"describe":     func(k *KeyMap) *key.Binding { return &k.Describe },
	"new_terminal": func(k *KeyMap) *key.Binding { return &k.NewTerminal }, "follow": func(k *KeyMap) *key.Binding { return &k.Follow },
	"search_next": func(k *KeyMap) *key.Binding { return &k.SearchNext }, "search_prev": func(k *KeyMap) *key.Binding { return &k.SearchPrev },
	"zoom": func(k *KeyMap) *key.Binding { return &k.Zoom }, "back": func(k *KeyMap) *key.Binding { return &k.Back },
	"quit": func(k *KeyMap) *key.Binding { return &k.Quit }, "detach": func(k *KeyMap) *key.Binding { return &k.Detach },
	"wrap": func(k *KeyMap) *key.Binding { return &k.Wrap }, "timestamps": func(k *KeyMap) *key.Binding { return &k.Timestamps },
	"copy": func(k *KeyMap) *key.Binding { return &k.Copy }, "save": func(k *KeyMap) *key.Binding { return &k.Save },
	"sort_cpu": func(k *KeyMap) *key.Binding { return &k.SortCPU }, "sort_rss": func(k *KeyMap) *key.Binding { return &k.SortRSS },
	"sort_age": func(k *KeyMap) *key.Binding { return &k.SortAge }, "sort_pgid": func(k *KeyMap) *key.Binding { return &k.SortPGID },
	"sort_state":  func(k *KeyMap) *key.Binding { return &k.SortState },
	"worst_first": func(k *KeyMap) *key.Binding { return &k.Worst },
}

// get is the binding of the named action.
func (k *KeyMap) get(name string) *key.Binding { return keyFields[name](k) }

// ActionNames lists the names Apply accepts.
func (k KeyMap) ActionNames() []string {
	var names []string
	for n := range keyFields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Apply replaces the keys of the named actions, e.g. {"detach": {"ctrl+g"}}.
// Keys are single keys as Bubble Tea names them ("ctrl+g", "f2", "alt+x");
// chords such as "ctrl+a d" are not supported.
func (k *KeyMap) Apply(overrides map[string][]string) error {
	for name, keys := range overrides {
		field, ok := keyFields[name]
		if !ok {
			return fmt.Errorf("keymap: unknown action %q (have %s)", name, strings.Join(k.ActionNames(), ", "))
		}
		if len(keys) == 0 {
			return fmt.Errorf("keymap: action %q needs at least one key", name)
		}
		for i, key := range keys {
			if key == " " { // Bubble Tea v1's name for it
				keys[i] = "space"
			}
		}
		b := field(k)
		b.SetKeys(keys...)
		b.SetHelp(strings.Join(keys, "/"), b.Help().Desc)
	}
	return nil
}
