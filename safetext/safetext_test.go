package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds what a sandbox could put in a tag: a window-title change
// (OSC 0 ended by BEL), a colour (CSI SGR), a clipboard write (OSC 52
// ended by ST), 8-bit C1 CSI and OSC, and a lone invalid byte.
const hostile = "a\x1b]0;pwned\x07b\x1b[31mc\x1b]52;c;aGk=\x1b\\d\u009b31m\u009d0;t\u009cé\x9bZ\n\tz\x7f"

func TestLineLeavesNoControlByte(t *testing.T) {
	got := Line(hostile)
	if !utf8.ValidString(got) {
		t.Fatalf("Line(%q) = %q is not UTF-8", hostile, got)
	}
	for _, r := range got {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			t.Fatalf("Line(%q) = %q keeps control %U", hostile, got, r)
		}
	}
	// The printable text stays, so the operator still sees what was there.
	for _, want := range []string{"]0;pwned", "[31mc", "]52;c;aGk=", "é", "Z", "z"} {
		if !strings.Contains(got, want) {
			t.Errorf("Line(%q) = %q lost %q", hostile, got, want)
		}
	}
}

func TestLineKeepsCleanTextAsIs(t *testing.T) {
	for _, s := range []string{"", "build-7", "ci/naïve ✓ 日本", "a b"} {
		if got := Line(s); got != s {
			t.Errorf("Line(%q) = %q", s, got)
		}
	}
}

func TestClip(t *testing.T) {
	if got := Clip("abcdef", 4); got != "abc…" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("a\x1bb", 10); got != "a b" {
		t.Errorf("Clip = %q", got)
	}
}

func TestQuotedKeepsShortStringsAndSaysHowLongALongOneWas(t *testing.T) {
	if got := Quoted("/tmp/x"); got != "/tmp/x" {
		t.Fatalf("Quoted of a short path = %q", got)
	}
	long := strings.Repeat("é", 150) // 300 bytes: the cut falls inside a rune
	got := Quoted(long)
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…(300 bytes)") || len(got) > MaxQuoted+len("…(300 bytes)") {
		t.Fatalf("Quoted of 300 bytes = %q", got)
	}
}
