package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// arrival is a provider sandbox that appears after start, whose summary
// has groups running groups.
func arrival(id string, groups int) SandboxSpec {
	info := ProviderInfo{ID: id, Template: "base", State: "running", StartedAt: testNow, EndAt: testNow.Add(time.Hour)}
	snap := demoSnapshot(testNow)
	one := snap.Groups[0]
	snap.Groups, snap.Terminals = nil, nil
	for i := range groups {
		g := one
		g.PGID = 1000 + i
		snap.Groups = append(snap.Groups, g)
	}
	return SandboxSpec{Name: "e2b:" + id, Kind: "e2b", Target: "e2b sandbox " + id, Provider: &fakeProvider{info: info}, ProviderInfo: info,
		Open:    func(context.Context) (Source, error) { return newFakeSource(), nil },
		Summary: func(context.Context) (sandbox.Snapshot, error) { return snap, nil }}
}

func sandboxNamed(t *testing.T, m *Model, name string) *sandboxState {
	t.Helper()
	var found *sandboxState
	for _, sb := range m.sandboxes {
		if sb.spec.Name == name {
			if found != nil {
				t.Fatalf("two sandboxes named %s", name)
			}
			found = sb
		}
	}
	if found == nil {
		t.Fatalf("no sandbox named %s", name)
	}
	return found
}

// TestArrivalsJoinTheFleet: a sandbox that appears after start gets its
// row and its counts from its summary, without a visit; one that comes
// again under a shown name is not a second row; a gone one that comes
// back (a pod re-created) is shown running again with its new counts,
// and one re-created before the TUI knew the old one gone takes its place
// as soon as its provider says so, which is asked at once.
func TestArrivalsJoinTheFleet(t *testing.T) {
	m, _, opens, mu := newFleetModel(t)
	s01 := sandboxNamed(t, m, "e2b:s01")
	s01Plane := s01.spec.Provider.(*fakeProvider)
	describes := s01Plane.count("describe")

	_, cmd := m.Update(arrivalsMsg{ctxs: []SandboxSpec{arrival("s12", 3), arrival("s01", 4), {Kind: "e2b"}}})
	run(t, m, cmd)
	v := stripStyle(viewOf(m))
	if !strings.Contains(v, "Sandboxes 13 ") || !strings.Contains(v, "counts 12/12") {
		t.Fatalf("the new sandbox is not counted in the title:\n%s", v)
	}
	if c, ok := sandboxNamed(t, m, "e2b:s12").counts(); !ok || c.Groups != 3 {
		t.Fatalf("the new sandbox's counts: %+v known %v", c, ok)
	}
	if line := lineWith(v, "e2b:s12"); !strings.Contains(line, "running") {
		t.Fatalf("the new sandbox's row: %q", line)
	}
	if sandboxNamed(t, m, "e2b:s01") != s01 {
		t.Fatal("s01 came again and was replaced while its provider still knows it")
	}
	if got := s01Plane.count("describe"); got != describes+1 {
		t.Fatalf("s01 came again: its provider was asked %d times; want once, at once", got-describes)
	}
	mu.Lock()
	if *opens != 0 {
		t.Errorf("%d sandboxes were dialled; want none", *opens)
	}
	mu.Unlock()

	// s02 is gone, then comes back: the same row, running, new counts.
	s02 := sandboxNamed(t, m, "e2b:s02")
	m.Update(scopedMsg{s02, providerInfoMsg{err: fmt.Errorf("%w: deleted", ErrSandboxGone)}})
	if line := lineWith(stripStyle(viewOf(m)), "e2b:s02"); !strings.Contains(line, "gone") {
		t.Fatalf("s02 is not shown gone: %q", line)
	}
	_, cmd = m.Update(arrivalsMsg{ctxs: []SandboxSpec{arrival("s02", 2)}})
	run(t, m, cmd)
	back := sandboxNamed(t, m, "e2b:s02")
	if back == s02 || back.index != s02.index || m.sandboxes[s02.index] != back {
		t.Fatal("s02 came back but is not in its old place")
	}
	if c, ok := back.counts(); !ok || c.Groups != 2 {
		t.Fatalf("s02's new counts: %+v known %v", c, ok)
	}
	if line := lineWith(stripStyle(viewOf(m)), "e2b:s02"); !strings.Contains(line, "running") {
		t.Fatalf("s02 is not shown running again: %q", line)
	}

	// s01's provider now says the old one is gone: the waiting one takes
	// its place.
	_, cmd = m.Update(scopedMsg{s01, providerInfoMsg{err: fmt.Errorf("%w: replaced", ErrSandboxGone)}})
	run(t, m, cmd)
	if now := sandboxNamed(t, m, "e2b:s01"); now == s01 {
		t.Fatal("s01 is gone and the new s01 did not take its place")
	} else if c, ok := now.counts(); !ok || c.Groups != 4 {
		t.Fatalf("the new s01's counts: %+v known %v", c, ok)
	}
	v = stripStyle(viewOf(m))
	if !strings.Contains(v, "Sandboxes 13 ") || !strings.Contains(v, "counts 12/12") {
		t.Fatalf("after the replacements:\n%s", v)
	}
}

// TestArrivalsAreReadInBatchesUntilClosed: what is waiting on the channel
// comes in one message; a closed channel is read no more.
func TestArrivalsAreReadInBatchesUntilClosed(t *testing.T) {
	ch := make(chan SandboxSpec, 3)
	m, _ := newTestModel(t, 120, 40, func(o *Options) { o.Arrivals = ch })
	ch <- arrival("a", 1)
	ch <- arrival("b", 1)
	msg, ok := m.awaitArrivals()().(arrivalsMsg)
	if !ok || len(msg.ctxs) != 2 || msg.closed {
		t.Fatalf("first read: %+v", msg)
	}
	m.Update(msg)
	if len(m.sandboxes) != 3 {
		t.Fatalf("%d contexts after two arrived; want 3", len(m.sandboxes))
	}
	close(ch)
	msg, ok = m.awaitArrivals()().(arrivalsMsg)
	if !ok || len(msg.ctxs) != 0 || !msg.closed {
		t.Fatalf("after close: %+v", msg)
	}
	// What the update asks for next must not include reading again.
	_, cmd := m.Update(msg)
	if cmd == nil {
		return
	}
	next := []tea.Msg{cmd()}
	if batch, ok := next[0].(tea.BatchMsg); ok {
		next = next[:0]
		for _, c := range batch {
			if c != nil {
				next = append(next, c())
			}
		}
	}
	for _, msg := range next {
		if _, again := msg.(arrivalsMsg); again {
			t.Fatal("a closed channel is read again")
		}
	}
}

// TestArrivalOnScreenIsShownAndOpened: the sandbox on screen is gone and
// comes back: the screen shows the new one, dialled as a switch would, and
// a dialog opened for the old one stays the old one's.
func TestArrivalOnScreenIsShownAndOpened(t *testing.T) {
	m, _, _, _ := newFleetModel(t)
	old := sandboxNamed(t, m, "e2b:s02")
	m.fleet = nil
	run(t, m, m.switchTo(old.index))
	if m.cur != old {
		t.Fatal("s02 not shown")
	}
	m.Update(scopedMsg{old, providerInfoMsg{err: fmt.Errorf("%w: deleted", ErrSandboxGone)}})
	m.dialogSB = old
	_, cmd := m.Update(arrivalsMsg{ctxs: []SandboxSpec{arrival("s02", 2)}})
	run(t, m, cmd)
	back := sandboxNamed(t, m, "e2b:s02")
	if m.cur != back || back == old {
		t.Fatal("the screen still shows the gone s02")
	}
	if back.state != openReady {
		t.Fatalf("the new s02 on screen is not dialled: state %d", back.state)
	}
	if m.dialogSB != old {
		t.Fatal("a dialog opened for the gone s02 now acts on the new one")
	}
	if v := stripStyle(viewOf(m)); strings.Contains(v, "✗ gone") {
		t.Fatalf("the header still says gone:\n%s", v)
	}
}
