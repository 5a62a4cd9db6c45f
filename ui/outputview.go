package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxOutputLines bounds a group's output buffer; older lines are dropped.
const maxOutputLines = 5000

// outputView is a group's output: bounded lines, a scroll position that
// follows the tail until the operator scrolls up, and a search.
type outputView struct {
	lines   []string // plain text, escape sequences removed
	partial string   // the unterminated last line
	dropped int      // lines dropped off the top, for "n lines not shown"
	bytes   int      // text held in lines
	// maxBytes bounds the text held (Options.ScrollbackBytes); 0 means
	// only the line cap applies.
	maxBytes int
	offset   int // first visible line
	follow   bool
	height   int

	query   string
	matches []int // line indexes containing query
	current int   // index into matches
}

func newOutputView() outputView { return outputView{follow: true} }

// append adds raw output bytes.
func (o *outputView) append(p []byte) {
	text := o.partial + ansi.Strip(string(p))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	parts := strings.Split(text, "\n")
	o.partial = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		// A bare \r rewrites the line (progress bars): keep what is left.
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		o.lines = append(o.lines, l)
		o.bytes += len(l)
	}
	o.trim()
	if o.query != "" {
		o.research()
	}
	if o.follow {
		o.toBottom()
	}
}

// trim drops the oldest lines beyond the line cap and the byte budget,
// always keeping the newest line.
func (o *outputView) trim() {
	drop := max(0, len(o.lines)-maxOutputLines)
	size := 0
	for _, l := range o.lines[:drop] {
		size += len(l)
	}
	for o.maxBytes > 0 && o.bytes-size > o.maxBytes && drop < len(o.lines)-1 {
		size += len(o.lines[drop])
		drop++
	}
	if drop == 0 {
		return
	}
	o.bytes -= size
	o.lines = append([]string(nil), o.lines[drop:]...)
	o.dropped += drop
	o.offset = max(0, o.offset-drop)
}

// all is every line including the partial one.
func (o *outputView) count() int {
	if o.partial != "" {
		return len(o.lines) + 1
	}
	return len(o.lines)
}

func (o *outputView) line(i int) string {
	if i < len(o.lines) {
		return o.lines[i]
	}
	p := o.partial
	if j := strings.LastIndexByte(p, '\r'); j >= 0 {
		p = p[j+1:]
	}
	return p
}

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

// render returns the visible lines fitted to w, with matches highlighted.
func (o *outputView) render(st styles, w int) []string {
	out := make([]string, 0, o.height)
	curLine := -1
	if len(o.matches) > 0 {
		curLine = o.matches[o.current]
	}
	for i := o.offset; i < o.count() && len(out) < o.height; i++ {
		l := ansi.Truncate(o.line(i), w, "…")
		if o.query != "" {
			l = highlight(l, o.query, st, i == curLine)
		}
		out = append(out, l)
	}
	return out
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
