package ui

import (
	"bytes"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// maxOutputLines bounds a group's output buffer; older lines are dropped.
const maxOutputLines = 5000

// outLine is one line of a group's output, already safe to draw: tabs
// expanded, colours (SGR) kept, every other control made visible or dropped.
type outLine struct {
	text  string    // what is drawn
	plain string    // text without colours, for search, copy and save
	at    time.Time // when the line arrived (its first byte)
}

// outputView is a group's output: bounded lines, a scroll position that
// follows the tail until the operator scrolls up, a search, and how lines
// are laid out (wrapped, or cut and scrolled sideways; with or without the
// time each arrived).
type outputView struct {
	lines   []outLine
	partial []byte    // the unterminated last line, raw
	partAt  time.Time // when the partial line started
	sgr     string    // colours still in force at the end of the last line
	dropped int       // lines dropped off the top, for "n lines not shown"
	bytes   int       // text held in lines
	// maxBytes bounds the text held (Options.ScrollbackBytes); 0 means
	// only the line cap applies.
	maxBytes int
	offset   int // first visible line
	follow   bool
	height   int

	wrap       bool // long lines continue on the next rows
	xoff       int  // cells scrolled to the right when not wrapping
	timestamps bool // prefix each line with the time it arrived
	// asReceived is set once some line's time is when it reached the TUI,
	// the sandbox having kept none: the pane says so.
	asReceived bool

	query   string
	matches []int // line indexes containing query
	current int   // index into matches
}

func newOutputView() outputView { return outputView{follow: true} }

// tabWidth is the distance between tab stops, as terminals set them.
const tabWidth = 8

// appendPieces adds output read from a stream: times say when its bytes
// arrived in the sandbox; bytes without a time get now, when they
// reached the TUI.
func (o *outputView) appendPieces(data []byte, times []pieceTime, now time.Time) {
	if len(times) == 0 || times[0].off > 0 {
		times = append([]pieceTime{{off: 0}}, times...)
	}
	for i, t := range times {
		end := len(data)
		if i+1 < len(times) {
			end = times[i+1].off
		}
		if t.off >= end {
			continue
		}
		at := t.at
		if at.IsZero() {
			o.asReceived = true
			at = now
		}
		o.split(data[t.off:end], at)
	}
	o.settle()
}

// append adds raw output bytes that arrived at now.
func (o *outputView) append(p []byte, now time.Time) {
	o.split(p, now)
	o.settle()
}

// split adds bytes that arrived at at, line by line: a line has the time
// of its first byte. It scans each byte once, however many lines come.
func (o *outputView) split(p []byte, at time.Time) {
	if len(o.partial) == 0 {
		o.partAt = at
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			o.partial = append(o.partial, p...)
			return
		}
		raw := p[:i]
		if len(o.partial) > 0 {
			raw = append(o.partial, raw...)
		}
		l := o.sanitize(raw, true)
		l.at = o.partAt
		o.lines = append(o.lines, l)
		o.bytes += len(l.text)
		o.partial = o.partial[:0] // sanitize copied what it kept
		o.partAt = at
		p = p[i+1:]
	}
}

// settle bounds the lines and keeps the search and the tail in view
// after new output.
func (o *outputView) settle() {
	o.trim()
	if o.query != "" {
		o.research()
	}
	if o.follow {
		o.toBottom()
	}
}

// sanitize turns one raw line into what can be drawn inside a pane. A bare
// \r rewrites the line (progress bars): what follows the last one is kept.
// commit carries the colours in force at its end over to the next line.
func (o *outputView) sanitize(raw []byte, commit bool) outLine {
	s := string(raw)
	s = strings.TrimSuffix(s, "\r")
	if i := strings.LastIndexByte(s, '\r'); i >= 0 {
		s = s[i+1:]
	}
	var b, plain strings.Builder
	sgr := o.sgr
	b.WriteString(sgr)
	col := 0
	var state byte
	for len(s) > 0 {
		seq, width, n, newState := ansi.DecodeSequence(s, state, nil)
		state = newState
		switch {
		case width > 0:
			b.WriteString(seq)
			plain.WriteString(seq)
			col += width
		case seq == "\t":
			pad := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", pad))
			plain.WriteString(strings.Repeat(" ", pad))
			col += pad
		case len(seq) == 1 && (seq[0] < ' ' || seq[0] == 0x7f):
			// A control a terminal would act on (bell, backspace, ...):
			// shown as its picture, one cell, so it can neither move the
			// cursor nor go unnoticed.
			pic := string(rune(0x2400 + int(seq[0])))
			if seq[0] == 0x7f {
				pic = "␡"
			}
			b.WriteString(pic)
			plain.WriteString(pic)
			col++
		case strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "m") && isSGR(seq):
			b.WriteString(seq)
			if seq == "\x1b[m" || seq == "\x1b[0m" {
				sgr = ""
			} else {
				sgr += seq
			}
		default:
			// Every other sequence (cursor moves, clears, titles, OSC 52
			// of its own, C1 controls) is dropped: the pane is not a
			// terminal.
		}
		s = s[n:]
	}
	if commit {
		o.sgr = sgr
	}
	text := b.String()
	if sgr != "" || strings.Contains(text, "\x1b") {
		text += "\x1b[0m"
	}
	return outLine{text: text, plain: plain.String()}
}

// isSGR says whether a CSI sequence is Select Graphic Rendition: only
// digits, ';' and ':' between "\x1b[" and "m".
func isSGR(seq string) bool {
	for _, c := range seq[2 : len(seq)-1] {
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// trim drops the oldest lines beyond the line cap and the byte budget,
// always keeping the newest line.
func (o *outputView) trim() {
	drop := max(0, len(o.lines)-maxOutputLines)
	size := 0
	for _, l := range o.lines[:drop] {
		size += len(l.text)
	}
	for o.maxBytes > 0 && o.bytes-size > o.maxBytes && drop < len(o.lines)-1 {
		size += len(o.lines[drop].text)
		drop++
	}
	if drop == 0 {
		return
	}
	o.bytes -= size
	o.lines = append([]outLine(nil), o.lines[drop:]...)
	o.dropped += drop
	o.offset = max(0, o.offset-drop)
}

// count is the number of lines, the partial one included.
func (o *outputView) count() int {
	if len(o.partial) > 0 {
		return len(o.lines) + 1
	}
	return len(o.lines)
}

func (o *outputView) get(i int) outLine {
	if i < len(o.lines) {
		return o.lines[i]
	}
	l := o.sanitize(o.partial, false)
	l.at = o.partAt
	return l
}

// line is line i without colours.
func (o *outputView) line(i int) string { return o.get(i).plain }

func (o *outputView) setHeight(h int) {
	o.height = max(1, h)
	if o.follow {
		o.toBottom()
	}
	o.clamp()
}

func (o *outputView) maxOffset() int { return max(0, o.count()-o.height) }

func (o *outputView) clamp() { o.offset = max(0, min(o.offset, o.maxOffset())) }

func (o *outputView) toBottom() { o.offset = o.maxOffset() }

// scroll moves the view; scrolling up pins it and turns follow off,
// reaching the bottom turns follow back on.
func (o *outputView) scroll(delta int) {
	o.offset += delta
	o.clamp()
	o.follow = o.offset >= o.maxOffset()
}

// scrollX moves the view sideways when lines are cut, not wrapped.
func (o *outputView) scrollX(delta int) {
	if o.wrap {
		return
	}
	o.xoff = max(0, o.xoff+delta)
}

func (o *outputView) setWrap(on bool) {
	o.wrap = on
	o.xoff = 0
}

func (o *outputView) setFollow(on bool) {
	o.follow = on
	if on {
		o.toBottom()
	}
}

// search sets the query and jumps to the last match (the newest output).
func (o *outputView) search(q string) {
	o.query = q
	o.research()
	if len(o.matches) > 0 {
		o.current = len(o.matches) - 1
		o.reveal()
	}
}

func (o *outputView) research() {
	o.matches = o.matches[:0]
	if o.query == "" {
		return
	}
	q := strings.ToLower(o.query)
	for i := 0; i < o.count(); i++ {
		if strings.Contains(strings.ToLower(o.line(i)), q) {
			o.matches = append(o.matches, i)
		}
	}
	o.current = min(o.current, max(0, len(o.matches)-1))
}

// nextMatch moves to the next (dir=1) or previous (dir=-1) match, wrapping.
func (o *outputView) nextMatch(dir int) bool {
	if len(o.matches) == 0 {
		return false
	}
	o.current = (o.current + dir + len(o.matches)) % len(o.matches)
	o.reveal()
	return true
}

func (o *outputView) reveal() {
	line := o.matches[o.current]
	if line < o.offset || line >= o.offset+o.height {
		o.offset = line - o.height/2
	}
	o.clamp()
	o.follow = false // looking at a match pins the view
}

// stampWidth is the cells a timestamp takes, its space included.
const stampWidth = len("15:04:05 ")

// visible is the plain text of the lines on screen, for copy.
func (o *outputView) visible() []string {
	var out []string
	for i := o.offset; i < o.count() && len(out) < o.height; i++ {
		out = append(out, o.line(i))
	}
	return out
}

// plainText is every line held, without colours, for save; with
// timestamps on, each line carries its arrival time.
func (o *outputView) plainText() string {
	var b strings.Builder
	for i := 0; i < o.count(); i++ {
		l := o.get(i)
		if o.timestamps {
			b.WriteString(l.at.Format(time.RFC3339Nano) + " ")
		}
		b.WriteString(l.plain)
		b.WriteByte('\n')
	}
	return b.String()
}

// render returns the visible rows fitted to w, with matches highlighted.
// Following the tail, the newest line sits on the bottom row even when
// wrapped lines take several rows each.
func (o *outputView) render(st styles, w int) []string {
	curLine := -1
	if len(o.matches) > 0 {
		curLine = o.matches[o.current]
	}
	rowsOf := func(i int) []string {
		l := o.get(i)
		text := l.text
		if o.query != "" && strings.Contains(strings.ToLower(l.plain), strings.ToLower(o.query)) {
			text = highlight(l.plain, o.query, st, i == curLine)
		}
		stamp := ""
		tw := w
		if o.timestamps && w > stampWidth+4 {
			stamp = st.muted.Render(l.at.Format("15:04:05") + " ")
			tw = w - stampWidth
		}
		if o.wrap {
			var rows []string
			width := ansi.StringWidth(text)
			for at := 0; at == 0 || at < width; at += tw {
				prefix := stamp
				if at > 0 && stamp != "" {
					prefix = strings.Repeat(" ", stampWidth)
				}
				rows = append(rows, prefix+ansi.Cut(text, at, at+tw))
			}
			return rows
		}
		if o.xoff > 0 {
			text = ansi.TruncateLeft(text, o.xoff+1, "…") // the mark takes the first cell
		}
		return []string{stamp + ansi.Truncate(text, tw, "…")}
	}
	if o.wrap && o.follow {
		var rev [][]string
		n := 0
		for i := o.count() - 1; i >= 0 && n < o.height; i-- {
			r := rowsOf(i)
			rev = append(rev, r)
			n += len(r)
		}
		var out []string
		for i := len(rev) - 1; i >= 0; i-- {
			out = append(out, rev[i]...)
		}
		return out[max(0, len(out)-o.height):]
	}
	out := make([]string, 0, o.height)
	for i := o.offset; i < o.count() && len(out) < o.height; i++ {
		out = append(out, rowsOf(i)...)
	}
	return out[:min(len(out), o.height)]
}

// highlight marks every case-insensitive occurrence of q in plain text l.
func highlight(l, q string, st styles, current bool) string {
	lower, lq := strings.ToLower(l), strings.ToLower(q)
	if !strings.Contains(lower, lq) || len(lower) != len(l) {
		return l
	}
	hs := st.match
	if current {
		hs = hs.Bold(true).Underline(true)
	}
	var b strings.Builder
	for {
		i := strings.Index(lower, lq)
		if i < 0 {
			b.WriteString(l)
			return b.String()
		}
		b.WriteString(l[:i])
		b.WriteString(hs.Render(l[i : i+len(q)]))
		l, lower = l[i+len(q):], lower[i+len(q):]
	}
}
