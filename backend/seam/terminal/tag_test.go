package terminal

import (
	"testing"
	"time"
)

func TestTerminalTagRoundTrips(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	for _, user := range []string{"", "demo:top", "a b: c"} {
		tag := terminalTag(id, 1500*time.Millisecond, user)
		gotID, grace, gotUser, ok := ParseTag(tag)
		if !ok || gotID != id || grace != 1500*time.Millisecond || gotUser != user {
			t.Fatalf("tag %q: %q %v %q %v", user, gotID, grace, gotUser, ok)
		}
		// The wire keeps milliseconds.
		if want := "sandtop-terminal:" + id + ":1500"; tag != want && tag[:len(want)+1] != want+":" {
			t.Fatalf("tag %q, want it to start %q", tag, want)
		}
	}
	// A grace shorter than a millisecond stays positive on the wire.
	if _, grace, _, ok := ParseTag(terminalTag(id, time.Microsecond, "")); !ok || grace != time.Millisecond {
		t.Fatalf("sub-millisecond grace read back as %v %v", grace, ok)
	}
	// Written before user tags existed.
	if _, grace, user, ok := ParseTag("sandtop-terminal:" + id + ":300"); !ok || grace != 300*time.Millisecond || user != "" {
		t.Fatalf("old tag: %v %q %v", grace, user, ok)
	}
	for _, bad := range []string{"sandtop-terminal:" + id, "sandtop-terminal:" + id + ":x:y", "other:" + id + ":1", "sandtop-terminal:" + id + ":0"} {
		if _, _, _, ok := ParseTag(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}
