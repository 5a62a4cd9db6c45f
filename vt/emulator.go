package vt

import "io"

// Emulator is a terminal screen fed with the output of a program.
//
// Write always consumes all of p and never fails, whatever the bytes are:
// a partial UTF-8 character or escape sequence at the end of p is kept and
// completed by the next Write. Implementations are not safe for concurrent
// use; wrap them in a Term (or a lock) when several goroutines share one.
type Emulator interface {
	io.Writer
	// Resize changes the screen size. Sizes below 1x1 are ignored.
	Resize(cols, rows int)
	// Size returns the screen size.
	Size() (cols, rows int)
	// Cell returns the cell at column x, row y; outside the screen it
	// returns a blank cell.
	Cell(x, y int) Cell
	// Cursor returns the cursor position and visibility.
	Cursor() Cursor
	// Modes returns the terminal modes the program has set.
	Modes() Modes
	// Title returns the window title set with OSC 0 or OSC 2.
	Title() string
	// SetResponseWriter sets where answers to queries (device attributes,
	// cursor position, status) go; nil discards them. It is called from
	// inside Write, so it must not block for long.
	SetResponseWriter(w io.Writer)
}

// Cursor is the cursor position (0-based) and whether it is shown.
type Cursor struct {
	X, Y    int
	Visible bool
}

// MouseMode is the mouse tracking a program asked for.
type MouseMode uint8

const (
	MouseNone   MouseMode = iota
	MouseX10              // ?9: press only
	MouseNormal           // ?1000: press and release
	MouseButton           // ?1002: also motion while a button is down
	MouseAny              // ?1003: all motion
)

// MouseEncoding is how mouse reports are to be encoded.
type MouseEncoding uint8

const (
	MouseEncDefault MouseEncoding = iota
	MouseEncUTF8                  // ?1005
	MouseEncSGR                   // ?1006
	MouseEncURXVT                 // ?1015
)

// Modes are the terminal modes that matter to whoever draws the screen or
// forwards keys and mouse events to the program.
type Modes struct {
	AltScreen      bool // ?47, ?1047, ?1049
	BracketedPaste bool // ?2004
	AppCursorKeys  bool // ?1 (DECCKM)
	AppKeypad      bool // ESC =
	Insert         bool // IRM (CSI 4 h)
	ReverseVideo   bool // ?5 (DECSCNM)
	FocusEvents    bool // ?1004
	Mouse          MouseMode
	MouseEncoding  MouseEncoding
}
