package wrapper

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTripThroughBash has one real bash expand every quoted word and print
// it NUL-terminated, then returns what came back.
func roundTripThroughBash(t testing.TB, words []string) []string {
	t.Helper()
	script := "printf '%s\\0' " + QuoteAll(words)
	out, err := exec.Command("/bin/bash", "--noprofile", "--norc", "-c", script).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(string(out), "\x00")
	return got[:len(got)-1]
}

func TestQuoteRoundTripsEveryByte(t *testing.T) {
	var words []string
	for c := 1; c < 256; c++ {
		words = append(words, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"f")
	}
	words = append(words, "", "'", `\`, `'\''`, "$HOME", "`id`", "$(id)", "-n", "--", "\xff\xfe", "é", "a b\tc\nd", `\x41`, "!x", "*", "~")
	got := roundTripThroughBash(t, words)
	if len(got) != len(words) {
		t.Fatalf("got %d words back, want %d", len(got), len(words))
	}
	for i := range words {
		if got[i] != words[i] {
			t.Errorf("word %q came back as %q (quoted %s)", words[i], got[i], Quote(words[i]))
		}
	}
}

func TestQuoteIsASCII(t *testing.T) {
	for _, w := range []string{"\xff", "é", "\x01\x7f", "plain"} {
		q := Quote(w)
		if !utf8.ValidString(q) || strings.ContainsFunc(q, func(r rune) bool { return r > 126 || r < 32 }) {
			t.Errorf("Quote(%q) = %q is not printable ASCII", w, q)
		}
	}
}

// TestQuoteRandomBytes is a cheap always-on fuzz: random NUL-free byte
// strings, expanded by real bash in one batch.
func TestQuoteRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, uint64(len(t.Name()))))
	var words []string
	for i := 0; i < 500; i++ {
		b := make([]byte, r.IntN(24))
		for j := range b {
			b[j] = byte(1 + r.IntN(255))
		}
		words = append(words, string(b))
	}
	got := roundTripThroughBash(t, words)
	for i := range words {
		if got[i] != words[i] {
			t.Fatalf("random word %q came back as %q", words[i], got[i])
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "'", "\xff", "$'x'", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			t.Skip("NUL cannot be an argv byte")
		}
		got := roundTripThroughBash(t, []string{s})
		if len(got) != 1 || !bytes.Equal([]byte(got[0]), []byte(s)) {
			t.Fatalf("%q came back as %q", s, got)
		}
	})
}

func TestParseArgvKeepsCompleteArguments(t *testing.T) {
	for in, want := range map[string][]string{
		"":                   nil,
		"bash\x00":           {"bash"},
		"a b\x00\x00c\n\x00": {"a b", "", "c\n"},
		"sleep\x00300":       {"sleep"},
	} {
		if got := ParseArgv(in); !slices.Equal(got, want) {
			t.Errorf("ParseArgv(%q) = %q, want %q", in, got, want)
		}
	}
}
