package ui

import (
	"context"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// focus is the state machine at the root of the UI: where keys go.
type focus int

const (
	focusList     focus = iota // moving through the tree or the terminals
	focusOutput                // scrolling and searching a group's output
	focusAttached              // every key goes to the remote terminal
	focusDialog                // a dialog or prompt owns the keys
)

func (f focus) String() string {
	return [...]string{"list", "output", "attached", "dialog"}[f]
}

// pane is which list has the cursor in focusList.
type pane int

const (
	paneTree pane = iota
	paneTerms
)

type connState int

const (
	connConnecting connState = iota
	connUp
	connLost
)

// fleeting is how long a group must have been listed for its departure to
// be logged and shown as settled.
const fleeting = 2 * time.Second

// settledRetention is how long a vanished group stays listed as settled.
const settledRetention = 60 * time.Second

// Model is the root model. It holds no goroutines of its own: streams are
// read by pumps and every Source call runs in a tea.Cmd.
type Model struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	keys   KeyMap
	st     styles
	now    func() time.Time

	// Every sandbox has its state in sandboxes; cur is the one on screen,
	// which keys, views and the detail pane use. A message from a Source
	// names its own sandbox (scopedMsg) and its handler takes that one as
	// a parameter, so it never acts on the screen by mistake.
	sandboxes []*sandboxState
	backoffs  *[]ProviderBackoff // the distinct providers of ctxs that back off (planeBackoff)
	cur       *sandboxState
	log       eventLog
	dialogSB  *sandboxState // the sandbox the open dialog acts on
	// fleet is the fleet view when it is open; fleetShown is how many
	// sandboxes' counts it has shown so far (for the log).
	fleet      *fleetView
	fleetShown int
	// waiting are sandboxes that appeared under the name of one shown,
	// to take its place once it is known gone (context_arrivals.go).
	waiting map[string]SandboxSpec

	width, height int
	lay           layout
	zoomed        bool
	attachZoomed  bool // zoomed by an attach, undone on detach

	focus        focus
	pane         pane
	attachedFrom pane // the pane to return to on detach
	dialog       dialog
	returnTo     focus // where a closed dialog hands the keys back
	attachReq    int   // pid to attach to as soon as its connection opens

	status      string
	statusLevel eventLevel
	statusUntil time.Time

	detail     detail
	detailGen  int
	resizeGen  int
	wake       chan struct{}
	frameArmed bool
	lastFrame  time.Time

	// A tick of the clock that changed nothing on screen lets View hand
	// back the last frame instead of drawing 1,000 groups' rows again: see
	// clockChangesNothing.
	lastView     string
	lastViewAges string // the ages the last frame showed
	reuseView    bool
}

// ghost is a group that left the process table, kept a while as settled.
type ghost struct {
	group sandbox.Group
	since time.Time
}

// New builds the root model.
func New(opts Options) (*Model, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	keys := DefaultKeyMap()
	if err := keys.Apply(opts.Keys); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{
		opts: opts, ctx: ctx, cancel: cancel,
		keys: keys, st: newStyles(opts.Theme), now: opts.Now,
		wake: make(chan struct{}, 1),
	}
	for i, c := range opts.Sandboxes {
		m.sandboxes = append(m.sandboxes, newSandbox(c, i, &m.log))
	}
	m.cur = m.sandboxes[opts.Initial]
	return m, nil
}

// NewModel is New for callers whose options are known to be valid (tests,
// screenshots); it panics otherwise.
func NewModel(opts Options) *Model {
	m, err := New(opts)
	if err != nil {
		panic(err)
	}
	return m
}

// Close stops every stream. It detaches only: nothing remote is signalled.
func (m *Model) Close() {
	m.cancel()
	m.detail.close()
}

// Init opens every sandbox's Source in the background (so the picker
// can tell reachable sandboxes from unreachable ones), and starts the
// header query, the process table watch and the clock for the one shown.
func (m *Model) Init() tea.Cmd {
	for _, w := range m.opts.Warnings {
		m.log.add(m.now(), levelWarn, "", "%s", w)
	}
	cmds := []tea.Cmd{m.clockCmd(time.Second), m.startProviders(), m.awaitArrivals()}
	if m.fleetFirst() {
		m.openContextPicker()
	}
	// A sandbox with a summary is dialled only when shown; the others (the
	// local one, configured endpoints: a few) are opened now.
	for _, sb := range m.sandboxes {
		shown := sb == m.cur && m.fleet == nil
		if sb.state == openPending && (sb.spec.Summary == nil || shown) {
			sb.state = openRunning
			cmds = append(cmds, m.openCmd(sb))
		}
	}
	cmds = append(cmds, m.scheduleSummaries(m.now()))
	if m.fleet != nil {
		m.log.add(m.now(), levelInfo, "", "%d sandboxes: c or enter shows one", len(m.sandboxes))
	} else if sb := m.cur; sb.state == openReady {
		cmds = append(cmds, m.startWatching(sb))
	} else {
		// Opening may start a daemon or look a sandbox up; "connecting"
		// follows once it is open.
		sb.events.add(m.now(), levelInfo, "opening %s", sb.targetName())
	}
	return tea.Batch(cmds...)
}

// targetName names the sandbox for the header and the log.
func (sb *sandboxState) targetName() string {
	if sb.info.Name != "" {
		return sb.info.Name
	}
	if sb.spec.Name != "" {
		return sb.spec.Name
	}
	return "sandbox"
}

// Update routes one message. It never blocks and does no I/O. A message
// tagged with a sandbox is applied to that sandbox; an untagged one to the
// sandbox on screen.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.reuseView = false
	if sm, ok := msg.(scopedMsg); ok && sm.sb != nil {
		if s, ok := sm.msg.(summaryMsg); ok {
			// An idle fleet's refreshes mostly change nothing on screen:
			// then the last frame is reused.
			m.reuseView = !m.onSummary(sm.sb, s) && m.lastView != ""
			if !m.reuseView {
				m.lastView = ""
			}
			return m, nil
		}
	}
	if _, tick := msg.(clockMsg); !tick {
		m.lastView = "" // anything but a tick may change the screen
	}
	if sm, ok := msg.(scopedMsg); ok {
		sb := sm.sb
		if sb == nil {
			sb = m.cur
		}
		cmd, _ := m.updateScoped(sb, sm.msg)
		return m, cmd
	}
	if cmd, ok := m.updateScoped(m.cur, msg); ok {
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		return m, m.setSize(msg.Width, msg.Height)
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.PasteMsg:
		return m, m.handlePaste(msg)
	case tea.MouseMsg:
		return m, m.handleMouse(msg)
	case describeDetailsMsg:
		m.onDescribeDetails(msg)
		return m, nil
	case frameMsg:
		m.frameArmed = false
		m.lastFrame = m.now()
		return m, m.drainStreams()
	case clockMsg:
		cmd := m.onClock()
		m.reuseView = m.clockChangesNothing()
		return m, cmd
	case providerTickMsg:
		return m, m.onProviderTick()
	case arrivalsMsg:
		return m, m.onArrivals(msg)
	case openDetailMsg:
		if msg.gen == m.detailGen && m.detail.cancel == nil {
			return m, m.openDetail()
		}
	case outputOpenedMsg:
		return m, m.onOutputOpened(msg)
	case attachedMsg:
		return m, m.onAttached(msg)
	case resizeMsg:
		if msg.gen == m.resizeGen {
			return m, m.resizeRemote()
		}
	case exportDoneMsg:
		m.onExportDone(msg)
	case resizeDoneMsg:
		if msg.err != nil {
			m.cur.events.add(m.now(), levelWarn, "resize of terminal %d to %dx%d failed: %v", msg.pid, msg.cols, msg.rows, msg.err)
		}
	}
	return m, nil
}

// updateScoped applies the results of sb's Source calls to sb, whichever
// sandbox is on screen; it reports false for other messages.
func (m *Model) updateScoped(sb *sandboxState, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case openedMsg:
		return m.onOpened(sb, msg), true
	case summaryMsg:
		m.onSummary(sb, msg)
		return nil, true
	case infoMsg:
		m.onInfo(sb, msg)
	case watchStartedMsg:
		return m.onWatchStarted(sb, msg), true
	case snapshotMsg:
		if msg.gen != sb.watchGen {
			return nil, true
		}
		m.applySnapshot(sb, msg.snap)
		var sync tea.Cmd
		if sb == m.cur { // the selection's stream is the screen's only
			sync = m.syncDetail()
		}
		return tea.Batch(m.nextSnapshotCmd(sb, msg.gen, msg.ch), sync), true
	case watchEndedMsg:
		return m.onWatchLost(sb, msg.gen, msg.err), true
	case reconnectMsg:
		if msg.gen == sb.watchGen {
			sb.watchGen++
			return m.watchCmd(sb, sb.watchGen), true
		}
	case spawnedMsg:
		return m.onSpawned(sb, msg), true
	case signalDoneMsg:
		m.onSignalDone(sb, msg)
	case teardownMsg:
		m.onTeardownProgress(sb, msg.pgid, msg.ev)
		return m.waitTeardownCmd(sb, msg.pgid, msg.ch), true
	case teardownDoneMsg:
		m.onTeardownDone(sb, msg)
	default:
		return m.updateProvider(sb, msg)
	}
	return nil, true
}

func (m *Model) onInfo(sb *sandboxState, msg infoMsg) {
	if msg.err != nil {
		sb.events.add(m.now(), levelError, "sandbox info: %v", msg.err)
		return
	}
	name := sb.info.Name
	sb.info = msg.info
	if name != "" {
		sb.info.Name = name
	}
	sb.events.add(m.now(), levelOK, "connected to %s (daemon %s)", sb.targetName(), msg.info.Version)
}

func (m *Model) onWatchStarted(sb *sandboxState, msg watchStartedMsg) tea.Cmd {
	if msg.gen != sb.watchGen {
		return nil
	}
	if msg.err != nil {
		return m.onWatchLost(sb, msg.gen, msg.err)
	}
	if sb.conn == connLost {
		sb.events.add(m.now(), levelOK, "reconnected")
	}
	sb.conn, sb.connErr = connUp, nil
	return m.nextSnapshotCmd(sb, msg.gen, msg.ch)
}

// onWatchLost marks the connection lost and retries after a pause.
func (m *Model) onWatchLost(sb *sandboxState, gen int, err error) tea.Cmd {
	if gen != sb.watchGen || m.ctx.Err() != nil {
		return nil
	}
	if sb.conn != connLost {
		if err != nil {
			sb.events.add(m.now(), levelError, "lost the process table: %v; retrying", err)
		} else {
			sb.events.add(m.now(), levelError, "lost the process table; retrying")
		}
	}
	sb.conn, sb.connErr = connLost, err
	if sb.providerPaused() {
		// Retrying would send traffic to a paused sandbox; a refresh that
		// finds it running again restarts the watch.
		return nil
	}
	return m.opts.Tick(2*time.Second, func(time.Time) tea.Msg { return scopedMsg{sb, reconnectMsg{gen: gen}} })
}

// applySnapshot gives sb a new process table: it keeps vanished groups as
// settled ghosts for a while, drops marks of groups that are gone, and keeps
// the cursors on the same items.
func (m *Model) applySnapshot(sb *sandboxState, s sandbox.Snapshot) {
	now := m.now()
	sb.snap = s
	live := make(map[int]bool, len(s.Groups))
	for _, g := range s.Groups {
		if g.PGID > 1 { // the table is by pgid: a group that never started has none
			live[g.PGID] = g.Live()
		}
	}
	// Groups that were listed and are not any more become ghosts, unless
	// they were fleeting (helper commands): those would only be noise.
	for _, g := range sb.tree.groups {
		if _, still := live[g.PGID]; still || !g.Live() {
			continue
		}
		seen, ok := sb.firstSeen[g.PGID]
		delete(sb.firstSeen, g.PGID)
		if !ok || now.Sub(seen) < fleeting {
			continue
		}
		if _, known := sb.ghosts[g.PGID]; known {
			continue
		}
		gone := g
		gone.State = groupstate.Settled
		gone.Members, gone.Escapees = nil, nil
		sb.ghosts[g.PGID] = ghost{group: gone, since: now}
		if _, tearing := sb.teardowns[g.PGID]; !tearing {
			sb.events.add(now, levelInfo, "pgid %d (%s) left the process table", g.PGID, command(&g))
		}
	}
	for pgid := range live {
		if _, ok := sb.firstSeen[pgid]; !ok {
			sb.firstSeen[pgid] = now
		}
	}
	groups := make([]sandbox.Group, 0, len(s.Groups)+len(sb.ghosts))
	for _, g := range s.Groups {
		if g.PGID > 1 {
			groups = append(groups, g)
		}
	}
	for pgid, gh := range sb.ghosts {
		if _, back := live[pgid]; back || now.Sub(gh.since) > settledRetention {
			delete(sb.ghosts, pgid)
			continue
		}
		groups = append(groups, gh.group)
	}
	sb.tree.setGroups(groups)
	for pgid := range sb.marks {
		if !live[pgid] {
			delete(sb.marks, pgid)
		}
	}
	m.setTerminals(sb, s.Terminals)
}

// setTerminals gives sb a new terminals list. The layout makes room for
// the terminals on screen, so it follows only for the sandbox shown.
func (m *Model) setTerminals(sb *sandboxState, ts []sandbox.Terminal) {
	keep := 0
	if t := sb.selectedTerminal(); t != nil {
		keep = t.PID
	}
	sb.terms = append(sb.terms[:0:0], ts...)
	sort.Slice(sb.terms, func(i, j int) bool { return sb.terms[i].PID < sb.terms[j].PID })
	sb.termCursor = min(sb.termCursor, max(0, len(sb.terms)-1))
	for i, t := range sb.terms {
		if t.PID == keep {
			sb.termCursor = i
		}
	}
	if sb == m.cur {
		m.lay = computeLayout(m.width, m.height, len(sb.terms), m.zoomed)
	}
}

func (sb *sandboxState) selectedTerminal() *sandbox.Terminal {
	if sb.termCursor < 0 || sb.termCursor >= len(sb.terms) {
		return nil
	}
	return &sb.terms[sb.termCursor]
}

func (sb *sandboxState) terminalByPID(pid int) *sandbox.Terminal {
	for i := range sb.terms {
		if sb.terms[i].PID == pid {
			return &sb.terms[i]
		}
	}
	return nil
}

// terminalOfSession is the terminal whose session sid is, if any: every
// group in it writes to that PTY.
func (sb *sandboxState) terminalOfSession(sid int) *sandbox.Terminal {
	for i := range sb.terms {
		if sid > 0 && sb.terms[i].SID == sid {
			return &sb.terms[i]
		}
	}
	return nil
}

// liveGroup returns the group with this pgid if it still has members.
func (sb *sandboxState) liveGroup(pgid int) *sandbox.Group {
	for i := range sb.tree.groups {
		g := &sb.tree.groups[i]
		if g.PGID == pgid && g.Live() {
			return g
		}
	}
	return nil
}

func (m *Model) onClock() tea.Cmd {
	now := m.now()
	if !m.statusUntil.IsZero() && now.After(m.statusUntil) {
		m.status, m.statusUntil = "", time.Time{}
		m.lastView = "" // the footer changed
	}
	// Count down smoothly while a teardown waits; otherwise a slow clock
	// for ages is all the idle UI redraws.
	every := time.Second
	var sync tea.Cmd
	for _, sb := range m.sandboxes {
		for pgid, td := range sb.teardowns {
			if !td.finished.IsZero() && now.Sub(td.finished) > 10*time.Second {
				delete(sb.teardowns, pgid)
				m.lastView = "" // its label leaves the row
			}
		}
		if sb.activeTeardowns() > 0 {
			every = 250 * time.Millisecond
		}
		if m.expireGhosts(sb, now) {
			m.lastView = ""
			if sb == m.cur {
				sync = m.syncDetail() // the cursor may have left a ghost
			}
		}
	}
	return tea.Batch(m.clockCmd(every), sync, m.scheduleSummaries(now))
}

// fleetFirst says whether the TUI opens on the fleet view: when there are
// many provider sandboxes to choose from.
func (m *Model) fleetFirst() bool {
	n := 0
	for _, sb := range m.sandboxes {
		if sb.spec.Summary != nil {
			n++
		}
	}
	return n >= fleetFirstAt
}

// clockChangesNothing says whether the frame drawn before this tick is
// still the screen: time shows only in the ages of the rows on screen,
// unless a teardown counts down, a dialog or a plane's countdown is open,
// or a vanished group's time ran out (those draw afresh).
func (m *Model) clockChangesNothing() bool {
	if m.lastView == "" || m.dialog != nil || m.hasProviders() {
		return false
	}
	for _, sb := range m.sandboxes {
		if len(sb.teardowns) > 0 {
			return false
		}
	}
	return m.visibleAges() == m.lastViewAges
}

// visibleAges is the AGE column of the tree rows a frame shows now.
func (m *Model) visibleAges() string {
	t := &m.cur.tree
	_, h := m.lay.tree.inner()
	now := m.now()
	var b strings.Builder
	for i := t.offset; i >= 0 && i < len(t.rows) && i < t.offset+h-1; i++ {
		r := t.rows[i]
		var at time.Time
		switch r.kind {
		case rowGroup:
			at = groupStarted(r.group)
		case rowProcess:
			at = r.proc.Started
		}
		if !at.IsZero() {
			b.WriteString(formatAge(now.Sub(at)))
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// expireGhosts drops the settled ghosts whose time is up by applying the
// last snapshot again (which changes nothing else), and says whether it did.
func (m *Model) expireGhosts(sb *sandboxState, now time.Time) bool {
	for _, gh := range sb.ghosts {
		if now.Sub(gh.since) > settledRetention {
			m.applySnapshot(sb, sb.snap)
			return true
		}
	}
	return false
}

// setStatus shows a transient message in the footer.
func (m *Model) setStatus(level eventLevel, text string) {
	m.status, m.statusLevel = safetext.Line(text), level // errors may quote the sandbox
	m.statusUntil = m.now().Add(6 * time.Second)
}

// readOnly says whether mutations are refused in sb: everywhere with
// Options.ReadOnly, or in this sandbox with its own flag.
func (m *Model) readOnly(sb *sandboxState) bool { return m.opts.ReadOnly || sb.spec.ReadOnly }

// refuse explains a mutation that read-only mode blocked in sb.
func (m *Model) refuse(sb *sandboxState, what string) {
	why := "sandtop was started with --read-only"
	if !m.opts.ReadOnly {
		why = sb.targetName() + " is read-only in the config"
	}
	text := "read-only: " + what + " refused (" + why + ")"
	m.setStatus(levelWarn, text)
	sb.events.add(m.now(), levelWarn, "%s", text)
}

func (m *Model) setSize(w, h int) tea.Cmd {
	m.width, m.height = w, h
	m.lay = computeLayout(w, h, len(m.cur.terms), m.zoomed)
	return m.layoutChanged()
}

// layoutChanged resizes what depends on the detail pane, and debounces the
// remote PTY resize so a drag of the window sends one request.
func (m *Model) layoutChanged() tea.Cmd {
	w, h := m.detailInner()
	m.detail.out.setHeight(h - m.detailHeaderLines())
	if m.detail.term != nil && m.focus == focusAttached {
		m.detail.term.resize(w, h)
	}
	if m.focus != focusAttached || m.detail.conn == nil {
		return nil
	}
	m.resizeGen++
	gen := m.resizeGen
	return m.opts.Tick(50*time.Millisecond, func(time.Time) tea.Msg { return resizeMsg{gen: gen} })
}

func (m *Model) detailInner() (int, int) { return m.lay.detail.inner() }
