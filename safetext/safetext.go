// Package safetext makes strings that come from a sandbox (tags, argv,
// paths, names, error texts, terminal titles) safe to print on the
// operator's terminal. Such a string may hold escape sequences: a tag could
// retitle the window, recolour the screen or (OSC 52) write the clipboard.
// The CLI and the TUI pass every such string through Line before drawing it;
// machine-readable output (JSON) keeps the exact string instead.
package safetext

import (
	"fmt"
	"strings"
)

// Line returns s as one line with no control characters: C0 controls (ESC,
// BEL, newline, tab…), DEL and C1 controls (U+0080–U+009F, which some
// terminals take as CSI, OSC and ST) become spaces, and bytes that are not
// UTF-8 become U+FFFD, so no byte of an escape sequence survives.
func Line(s string) string {
	if clean(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

// Clip is Line cut to at most n runes, the last one "…" when it was cut.
func Clip(s string, n int) string {
	s = Line(s)
	if n <= 0 {
		return ""
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// MaxQuoted is how much of a client's string (a path, a command) the
// daemon's error messages quote: a huge one is not echoed back whole.
const MaxQuoted = 200

// Quoted is s cut to MaxQuoted bytes (kept valid UTF-8) for an error
// message, saying how long it was. Unlike Line it keeps control
// characters: the message goes to a client, which cleans what it prints.
func Quoted(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", strings.ToValidUTF8(s[:MaxQuoted], ""), len(s))
}

func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f)
}

// clean reports whether s is valid UTF-8 without control characters, the
// common case, which Line returns unchanged without allocating.
func clean(s string) bool {
	for _, r := range s {
		if isControl(r) || r == '\uFFFD' {
			return false
		}
	}
	return true
}
