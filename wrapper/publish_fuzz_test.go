package wrapper

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzPublishedValues feeds the parsers of what a wrapper publishes (a
// file any process of the sandbox user may rewrite) with anything: they
// must never panic, and whatever they accept is canonical and in range.
func FuzzPublishedValues(f *testing.F) {
	for _, s := range []string{PublishedPrefix + "42", "42\n", "1", "0", "255", "256", "07", "-5", " 9 ", "64", "65", "a\x00b\x00", "\x00", "",
		// Found by the fuzzer in CI: a long published line whose id part was quoted whole.
		PublishedPrefix + strings.Repeat("\x01", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParsePublishedLine(s); err == nil {
			if n <= 1 || n > 1<<22 || strings.TrimSpace(strings.TrimPrefix(s, PublishedPrefix)) != strconv.Itoa(n) {
				t.Fatalf("ParsePublishedLine(%q) = %d", s, n)
			}
		} else if len(err.Error()) > 400 { // 80 bytes, each up to \xNN when quoted
			t.Fatalf("error of %d bytes quotes too much", len(err.Error()))
		}
		if n, err := ParsePgid(s); err == nil && (n <= 1 || strings.TrimSpace(s) != strconv.Itoa(n)) {
			t.Fatalf("ParsePgid(%q) = %d", s, n)
		}
		if n, err := ParseExitCode(s); err == nil && (n < 0 || n > 255 || strings.TrimSpace(s) != strconv.Itoa(n)) {
			t.Fatalf("ParseExitCode(%q) = %d", s, n)
		}
		if n, err := ParseSignal(s); err == nil && (n < 1 || n > 64 || strings.TrimSpace(s) != strconv.Itoa(n)) {
			t.Fatalf("ParseSignal(%q) = %d", s, n)
		}
		argv := ParseArgv(s)
		if joined := strings.Join(argv, "\x00"); len(argv) > 0 && !strings.HasPrefix(s, joined+"\x00") {
			t.Fatalf("ParseArgv(%q) = %q", s, argv)
		}
	})
}
