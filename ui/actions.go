package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// scope is where an action's key is heard.
type scope int

const (
	// inLists: anywhere but a dialog or an attached terminal, the output
	// pane included when it does not use the key itself.
	inLists scope = iota
	// inTree: the groups tree and the terminals list only.
	inTree
	// inOutput: the output pane, ahead of the lists.
	inOutput
	// inAttached: an attached terminal (only detach; every other key goes
	// to the remote program).
	inAttached
)

// hint says in which footers an action shows.
type hint uint8

const (
	hintList hint = 1 << iota
	hintOutput
)

// action is one thing the operator can do: the key dispatch, the ":"
// palette, the help screen and the footer all read this table, and
// read-only mode is enforced here, once, for every action that mutates.
type action struct {
	key     string // the keymap's name for its binding (config [keys])
	where   scope
	section string // help section; "" keeps it out of the help
	hints   hint
	// mutates names the action for a read-only refusal ("signal"); an
	// action that changes nothing remote leaves it empty.
	mutates string
	do      func(m *Model) tea.Cmd
	// The palette form: command name, argument synopsis and description.
	// call takes the typed arguments; without it the palette runs do.
	cmd, args, desc string
	call            func(m *Model, argv []string) tea.Cmd
}

// actions is the table, in the order help, footers and palette show it.
// It is filled in init: a package-level initializer that names handlers
// which reach back to the table would be an initialization cycle.
var actions []action

// helpOrder is the order of the help screen's sections.
var helpOrder = []string{"Navigate", "Act", "Find", "Sandbox (E2B)", "Output", "Sort", "General"}

func init() {
	move := func(delta int) func(*Model) tea.Cmd { return func(m *Model) tea.Cmd { return m.moveCursor(delta) } }
	scroll := func(by func(o *outputView) int) func(*Model) tea.Cmd {
		return func(m *Model) tea.Cmd { m.detail.out.scroll(by(&m.detail.out)); return nil }
	}
	sort := func(k sortKey) func(*Model) tea.Cmd { return func(m *Model) tea.Cmd { return m.sortBy(k) } }
	page := func(m *Model) int { return m.listHeight() }
	actions = []action{
		// The output pane's own keys come first: they win while it has focus.
		{key: "up", where: inOutput, hints: hintOutput, do: scroll(func(*outputView) int { return -1 })},
		{key: "down", where: inOutput, do: scroll(func(*outputView) int { return 1 })},
		{key: "page_up", where: inOutput, do: scroll(func(o *outputView) int { return -o.height })},
		{key: "page_down", where: inOutput, do: scroll(func(o *outputView) int { return o.height })},
		{key: "top", where: inOutput, do: scroll(func(o *outputView) int { return -o.count() })},
		{key: "bottom", where: inOutput, do: func(m *Model) tea.Cmd { m.detail.out.setFollow(true); return nil }},
		{key: "wrap", where: inOutput, section: "Output", hints: hintOutput,
			do: func(m *Model) tea.Cmd { o := &m.detail.out; o.setWrap(!o.wrap); return nil }},
		{key: "timestamps", where: inOutput, section: "Output", hints: hintOutput,
			do: func(m *Model) tea.Cmd { m.detail.out.timestamps = !m.detail.out.timestamps; return nil }},
		{key: "collapse", where: inOutput, do: func(m *Model) tea.Cmd { return m.scrollOutputSideways(-1) }},
		{key: "expand", where: inOutput, do: func(m *Model) tea.Cmd { return m.scrollOutputSideways(1) }},
		{key: "copy", where: inOutput, section: "Output", hints: hintOutput, do: (*Model).copyOutput},
		{key: "save", where: inOutput, section: "Output", hints: hintOutput,
			do: func(m *Model) tea.Cmd {
				m.openDialog(m.cur, newPrompt(promptSave, "save output to", m.defaultSaveName()))
				return nil
			}},
		{key: "filter", where: inOutput, hints: hintOutput,
			do: func(m *Model) tea.Cmd {
				m.openDialog(m.cur, newPrompt(promptSearch, "search output", m.detail.out.query))
				return nil
			}},
		{key: "search_next", where: inOutput, section: "Find", hints: hintOutput, do: func(m *Model) tea.Cmd { return m.nextMatch(1) }},
		{key: "search_prev", where: inOutput, section: "Find", do: func(m *Model) tea.Cmd { return m.nextMatch(-1) }},
		{key: "follow", where: inOutput, section: "Find", hints: hintOutput,
			do: func(m *Model) tea.Cmd { o := &m.detail.out; o.setFollow(!o.follow); return nil }},
		{key: "back", where: inOutput, do: func(m *Model) tea.Cmd { m.focus = focusList; return nil }},

		// Moving in the lists.
		{key: "up", where: inTree, section: "Navigate", do: move(-1)},
		{key: "down", where: inTree, section: "Navigate", do: move(1)},
		{key: "page_up", where: inTree, section: "Navigate", do: func(m *Model) tea.Cmd { return m.moveCursor(-page(m)) }},
		{key: "page_down", where: inTree, section: "Navigate", do: func(m *Model) tea.Cmd { return m.moveCursor(page(m)) }},
		{key: "top", where: inTree, section: "Navigate", do: move(-1 << 30)},
		{key: "bottom", where: inTree, section: "Navigate", do: move(1 << 30)},
		{key: "collapse", where: inTree, section: "Navigate", do: func(m *Model) tea.Cmd { m.fold(true); return m.syncDetail() }},
		{key: "expand", where: inTree, section: "Navigate", do: func(m *Model) tea.Cmd { m.fold(false); return m.syncDetail() }},

		// Acting.
		{key: "open", where: inTree, section: "Act", hints: hintList, do: (*Model).open},
		{key: "run", section: "Act", hints: hintList, mutates: "run",
			do:  func(m *Model) tea.Cmd { m.openDialog(m.cur, newPalette("run ")); return nil },
			cmd: "run", args: "ARGV…", desc: "start a process (no shell: use sh -c '…')", call: (*Model).cmdRun},
		{key: "new_terminal", section: "Act", hints: hintList, mutates: "terminal start",
			do:  func(m *Model) tea.Cmd { m.openDialog(m.cur, newPalette("term ")); return nil },
			cmd: "term", args: "[ARGV…]", desc: "start a terminal and attach to it", call: (*Model).cmdTerm},
		{key: "signal", section: "Act", hints: hintList | hintOutput, mutates: "signal",
			do:  (*Model).openSignalMenu,
			cmd: "signal", args: "NAME", desc: "signal the selection (asks first)", call: (*Model).cmdSignal},
		{key: "teardown", section: "Act", hints: hintList | hintOutput, mutates: "teardown",
			do:  (*Model).askTeardown,
			cmd: "teardown", desc: "tear down the selected group (asks first)"},
		{key: "describe", section: "Act",
			do:  (*Model).openDescribe,
			cmd: "describe", desc: "the selected group's full facts: argv, state dir, members, exit"},
		{key: "mark", where: inTree, section: "Act", hints: hintList,
			do: func(m *Model) tea.Cmd { m.toggleMark(); return m.moveCursor(1) }},
		{key: "bulk_teardown", section: "Act", mutates: "bulk teardown",
			do:  (*Model).askBulkTeardown,
			cmd: "bulk-teardown", desc: "tear down the marked groups (asks first)"},
		{key: "clear_marks", section: "Act",
			do:  func(m *Model) tea.Cmd { m.cur.marks = map[int]bool{}; return nil },
			cmd: "clear-marks", desc: "unmark every group"},

		// Sorting.
		{key: "sort_cpu", section: "Sort", hints: hintList, do: sort(sortCPU)},
		{key: "sort_rss", section: "Sort", do: sort(sortRSS)},
		{key: "sort_age", section: "Sort", do: sort(sortAge)},
		{key: "sort_pgid", section: "Sort", do: sort(sortPGID)},
		{key: "sort_state", section: "Sort", do: sort(sortState)},
		{key: "worst_first", section: "Sort",
			do: func(m *Model) tea.Cmd { m.openContextPicker(); m.fleet.worst, m.fleet.offset = true, 0; return nil }},

		// Finding.
		{key: "filter", section: "Find", hints: hintList,
			do: func(m *Model) tea.Cmd {
				m.focus, m.pane = focusList, paneTree // the filter applies to the groups
				m.openDialog(m.cur, newPrompt(promptFilter, "filter groups", m.cur.tree.filter))
				return m.syncDetail()
			},
			cmd: "filter", args: "TEXT", desc: "filter the groups", call: (*Model).cmdFilter},
		{key: "palette", section: "Find", hints: hintList,
			do: func(m *Model) tea.Cmd { m.openDialog(m.cur, newPalette("")); return nil }},
		{key: "contexts", section: "Find",
			do:  func(m *Model) tea.Cmd { m.openContextPicker(); return nil },
			cmd: "ctx", args: "[NAME|N]", desc: "switch sandbox (no name: the picker)", call: (*Model).cmdCtx},

		// The sandbox's provider.
		{key: "resume", section: "Sandbox (E2B)", mutates: "resume",
			do:  func(m *Model) tea.Cmd { return m.askProvider(m.cur, "resume", 0) },
			cmd: "e2b-resume", args: "[DURATION]", desc: "resume this paused E2B sandbox (asks first)",
			call: func(m *Model, argv []string) tea.Cmd { return m.cmdProvider("resume", argv) }},
		{key: "extend", section: "Sandbox (E2B)", mutates: "extend",
			do:  func(m *Model) tea.Cmd { return m.askProvider(m.cur, "extend", 0) },
			cmd: "e2b-extend", args: "[DURATION]", desc: "make this E2B sandbox end DURATION from now (asks first)",
			call: func(m *Model, argv []string) tea.Cmd { return m.cmdProvider("extend", argv) }},
		{key: "sandbox_logs", section: "Sandbox (E2B)",
			do:  (*Model).openProviderLogs,
			cmd: "e2b-logs", desc: "this E2B sandbox's own log"},

		// General.
		{key: "detach", where: inAttached, section: "General", do: (*Model).detachTerminal},
		{key: "back", section: "General", hints: hintOutput, do: (*Model).back},
		{key: "help", section: "General",
			do:  func(m *Model) tea.Cmd { m.openDialog(m.cur, newHelpDialog(m.keys)); return nil },
			cmd: "help", desc: "show every key"},
		{key: "quit", section: "General",
			do:  (*Model).quit,
			cmd: "quit", desc: "leave; remote processes keep running"},

		// Panes and folding (last, so the footer names them last).
		{key: "next_pane", section: "Navigate", hints: hintList, do: func(m *Model) tea.Cmd { return m.cyclePane(1) }},
		{key: "prev_pane", section: "Navigate", do: func(m *Model) tea.Cmd { return m.cyclePane(-1) }},
		{key: "zoom", section: "Navigate", do: (*Model).toggleZoom,
			cmd: "zoom", desc: "toggle the big detail pane"},
	}
}

// heard says whether a is dispatched with the UI focused on f.
func (a *action) heard(f focus) bool {
	switch a.where {
	case inOutput:
		return f == focusOutput
	case inTree:
		return f != focusOutput && f != focusAttached
	case inAttached:
		return f == focusAttached
	}
	return f != focusAttached
}

// dispatch runs the first action heard in the current focus whose key msg
// is; it returns false when no action has that key.
func (m *Model) dispatch(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	for i := range actions {
		a := &actions[i]
		if a.heard(m.focus) && key.Matches(msg, *m.keys.get(a.key)) {
			return m.perform(a, nil, false), true
		}
	}
	return nil, false
}

// perform runs an action, from its key or from the palette (with the
// typed arguments), after the one read-only check.
func (m *Model) perform(a *action, argv []string, fromPalette bool) tea.Cmd {
	if a.mutates != "" && m.readOnly(m.cur) {
		m.refuse(m.cur, a.mutates)
		return nil
	}
	if fromPalette && a.call != nil {
		return a.call(m, argv)
	}
	return a.do(m)
}

// paletteActions are the actions the ":" palette offers.
func paletteActions() []*action {
	var out []*action
	for i := range actions {
		if actions[i].cmd != "" {
			out = append(out, &actions[i])
		}
	}
	return out
}

// helpSections groups the bindings for the help screen, each once, in the
// table's order.
func (k KeyMap) helpSections() []helpSection {
	bySection := map[string][]key.Binding{}
	seen := map[*key.Binding]bool{}
	for i := range actions {
		a := &actions[i]
		b := k.get(a.key)
		if a.section == "" || seen[b] {
			continue
		}
		seen[b] = true
		bySection[a.section] = append(bySection[a.section], *b)
	}
	var out []helpSection
	for _, s := range helpOrder {
		if bs := bySection[s]; len(bs) > 0 {
			out = append(out, helpSection{s, bs})
		}
	}
	return out
}

// footerBindings are the footer's hints for the current focus.
func (m *Model) footerBindings() []key.Binding {
	want := hintList
	if m.focus == focusOutput {
		want = hintOutput
	}
	var out []key.Binding
	for i := range actions {
		if a := &actions[i]; a.hints&want != 0 {
			out = append(out, *m.keys.get(a.key))
		}
	}
	return out
}

type helpSection struct {
	title    string
	bindings []key.Binding
}
