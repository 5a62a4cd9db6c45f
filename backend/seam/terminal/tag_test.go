package terminal

import "testing"

func TestTerminalTagRoundTrips(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	for _, user := range []string{"", "demo:top", "a b: c"} {
		gotID, grace, gotUser, ok := ParseTag(terminalTag(id, 1500, user))
		if !ok || gotID != id || grace != 1500 || gotUser != user {
			t.Fatalf("tag %q: %q %d %q %v", user, gotID, grace, gotUser, ok)
		}
	}
	// Written before user tags existed.
	if _, grace, user, ok := ParseTag("sandtop-terminal:" + id + ":300"); !ok || grace != 300 || user != "" {
		t.Fatalf("old tag: %d %q %v", grace, user, ok)
	}
	for _, bad := range []string{"sandtop-terminal:" + id, "sandtop-terminal:" + id + ":x:y", "other:" + id + ":1"} {
		if _, _, _, ok := ParseTag(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}
