package wrapper

import "testing"

func TestStripperSplitsAnywhere(t *testing.T) {
	stream := "sandtop-published 4242\nhello"
	for cut := 0; cut <= len(stream); cut++ {
		var s Stripper
		got := string(s.Strip([]byte(stream[:cut]))) + string(s.Strip([]byte(stream[cut:])))
		if got != "hello" {
			t.Fatalf("cut %d: %q", cut, got)
		}
	}
	var s Stripper
	if got := string(s.Strip([]byte("plain output"))); got != "plain output" {
		t.Fatalf("%q", got)
	}
}

// Stderr carries whatever bash wrote before the guard, then the line.
func TestCutPublishedFindsTheLineAfterNoise(t *testing.T) {
	cases := []struct {
		in, before, after string
		found             bool
	}{
		{"sandtop-published 7\nerr", "", "err", true},
		{"bash: warning: setlocale\nsandtop-published 7\nerr\n", "bash: warning: setlocale\n", "err\n", true},
		{"sandtop-published 7", "", "", false},            // the line is not complete yet
		{"noise sandtop-published 7\nerr", "", "", false}, // not at a line start
		{"err\n", "", "", false},
	}
	for _, c := range cases {
		before, after, found := CutPublished([]byte(c.in))
		if found != c.found || string(before) != c.before || string(after) != c.after {
			t.Errorf("%q: got %q %q %v", c.in, before, after, found)
		}
	}
}
