package uisource

import (
	"context"
	"strings"
	"testing"

	"sandtop/backend/daemon"
	"sandtop/sandbox"
)

// A terminal's own group is tagged as ls shows the terminal, never with
// the internal marker its process carries.
func TestTerminalGroupShowsNoInternalTag(t *testing.T) {
	src, _ := newTestSource(t, daemon.Config{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := src.SpawnTerminal(ctx, []string{"bash", "--norc", "--noprofile"}, 24, 80)
	if err != nil {
		t.Fatal(err)
	}
	var tag string
	nextSnapshotWhere(t, watch, "the terminal's group", func(s sandbox.Snapshot) bool {
		for _, g := range s.Groups {
			if g.PGID == pid {
				tag = g.Tag
				return true
			}
		}
		return false
	})
	if strings.HasPrefix(tag, "sandtop-terminal") {
		t.Fatalf("terminal group %d tagged %q", pid, tag)
	}
}
