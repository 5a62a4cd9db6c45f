package ui

// rect is a region of the screen in cells.
type rect struct{ x, y, w, h int }

// layout is where each component goes for one screen size. It is computed
// in one place so every component knows its size, and so the remote PTY can
// be resized whenever the detail pane changes.
type layout struct {
	header, tree, terms, detail, events, footer rect
	zoomed                                      bool
	// stacked puts the detail pane under the lists, full width, on
	// screens too narrow to give it minDetailWidth beside them.
	stacked bool
}

const (
	headerHeight = 1
	footerHeight = 1
	// minDetailWidth is the narrowest detail pane drawn beside the lists:
	// enough for a shell prompt and a line of output.
	minDetailWidth = 38
)

func computeLayout(w, h int, termCount int, zoomed bool) layout {
	var l layout
	l.zoomed = zoomed
	l.header = rect{0, 0, w, headerHeight}
	l.footer = rect{0, h - footerHeight, w, footerHeight}
	body := h - headerHeight - footerHeight
	if body < 4 {
		body = 4
	}
	if zoomed {
		l.detail = rect{0, headerHeight, w, body}
		return l
	}
	leftW := w * 58 / 100
	if leftW < 60 {
		leftW = min(60, w-20)
	}
	l.stacked = w-leftW < minDetailWidth
	evH := 7
	switch {
	case h < 32 && l.stacked:
		evH = 3 // the newest event; the detail pane needs the rows more
	case h < 32:
		evH = 5
	}
	main := body - evH
	if main < 6 {
		main = 6
	}
	termsH := termCount + 3
	if l.stacked {
		// Lists on top, the detail pane under them, all full width.
		detailH := max(3, main*45/100)
		lists := main - detailH
		termsH = max(min(4, lists/2), min(termsH, lists/3))
		l.tree = rect{0, headerHeight, w, lists - termsH}
		l.terms = rect{0, headerHeight + lists - termsH, w, termsH}
		l.detail = rect{0, headerHeight + lists, w, detailH}
		l.events = rect{0, headerHeight + main, w, evH}
		return l
	}
	termsH = max(4, min(termsH, main/3))
	l.tree = rect{0, headerHeight, leftW, main - termsH}
	l.terms = rect{0, headerHeight + main - termsH, leftW, termsH}
	l.detail = rect{leftW, headerHeight, w - leftW, main}
	l.events = rect{0, headerHeight + main, w, evH}
	return l
}

// paneInner is the content size of a framed pane.
func (r rect) inner() (w, h int) { return max(0, r.w-2), max(0, r.h-2) }
