package ui

import (
	"strings"
	"testing"
)

// The action table is the one list of what the UI does: every binding of
// the keymap belongs to an action, palette names are unique, and no key is
// shadowed by another heard in the same focus (the output pane may only
// take a key over from the lists, on purpose).
func TestActionTableCoversTheKeymapWithoutClashes(t *testing.T) {
	used := map[string]bool{}
	cmds := map[string]bool{}
	for _, a := range actions {
		if _, ok := keyFields[a.key]; !ok {
			t.Errorf("action names unknown key %q", a.key)
		}
		used[a.key] = true
		if a.cmd != "" {
			if cmds[a.cmd] {
				t.Errorf("palette command %q twice", a.cmd)
			}
			cmds[a.cmd] = true
		}
		if a.call != nil && a.cmd == "" {
			t.Errorf("action %q takes palette arguments but has no palette name", a.key)
		}
	}
	for name := range keyFields {
		if !used[name] {
			t.Errorf("binding %q does nothing: no action uses it", name)
		}
	}
	k := DefaultKeyMap()
	for _, f := range []focus{focusList, focusOutput, focusAttached} {
		first := map[string]*action{}
		for i := range actions {
			a := &actions[i]
			if !a.heard(f) {
				continue
			}
			for _, key := range k.get(a.key).Keys() {
				if prev, ok := first[key]; ok && prev.where != inOutput {
					t.Errorf("focus %v: key %q of %q is shadowed by %q", f, key, a.key, prev.key)
				}
				if _, ok := first[key]; !ok {
					first[key] = a
				}
			}
		}
	}
}

// Read-only is enforced by the table, once: every mutating action, by its
// key and by its palette command, is refused with the reason and opens
// nothing.
func TestReadOnlyRefusesEveryMutatingActionByKeyAndPalette(t *testing.T) {
	for i := range actions {
		a := &actions[i]
		if a.mutates == "" {
			continue
		}
		t.Run(a.key, func(t *testing.T) {
			m, src := newTestModel(t, 160, 50, func(o *Options) { o.ReadOnly = true })
			press(t, m, "j") // a group under the cursor
			press(t, m, m.keys.get(a.key).Keys()[0])
			if m.dialog != nil {
				t.Fatalf("key %q opened a dialog in read-only mode", a.key)
			}
			if a.cmd != "" {
				press(t, m, ":")
				typeText(t, m, a.cmd)
				press(t, m, "enter")
				if m.dialog != nil {
					t.Fatalf(":%s opened a dialog in read-only mode", a.cmd)
				}
			}
			want := "read-only: " + a.mutates + " refused"
			n := strings.Count(eventsText(m), want)
			if wantN := 1 + btoi(a.cmd != ""); n != wantN {
				t.Fatalf("%q logged %d times, want %d:\n%s", want, n, wantN, eventsText(m))
			}
			if spawns, sigs, tds := src.calls(); len(spawns)+len(sigs)+len(tds) != 0 {
				t.Fatalf("read-only let through spawns=%v signals=%v teardowns=%v", spawns, sigs, tds)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
