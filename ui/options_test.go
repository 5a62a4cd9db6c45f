package ui

import (
	"strings"
	"testing"
	"time"
)

func TestConfirmationsTurnedOffOneByOne(t *testing.T) {
	m, src := newTestModel(t, 160, 50, func(o *Options) { o.NoConfirm = NoConfirm{Teardown: true, Signal: true, BulkTeardown: true} })
	press(t, m, "j", "j", "x") // teardown: no dialog
	if m.dialog != nil {
		t.Fatalf("teardown asked although turned off")
	}
	if _, _, tds := src.calls(); len(tds) != 1 {
		t.Fatalf("teardowns = %v", tds)
	}
	press(t, m, "k", "s", "enter") // SIGTERM: sent at once
	if _, sigs, _ := src.calls(); len(sigs) != 1 || sigs[0] != "4100:SIGTERM" {
		t.Fatalf("signals = %v", sigs)
	}
	press(t, m, "s", "5", "enter") // SIGKILL: still asks
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("SIGKILL went out without asking")
	}
	press(t, m, "esc", "space", "X") // bulk: the preview, enter confirms
	if _, ok := m.dialog.(*bulkDialog); !ok {
		t.Fatalf("bulk teardown skipped its preview")
	}
	if strings.Contains(viewOf(m), "Type 1") {
		t.Fatalf("bulk teardown asks for the count although turned off")
	}
	press(t, m, "enter")
	if _, _, tds := src.calls(); len(tds) != 2 {
		t.Fatalf("teardowns = %v", tds)
	}
}

func TestOutputKeepsScrollbackBytes(t *testing.T) {
	o := newOutputView()
	o.maxBytes = 100
	for range 50 {
		o.append([]byte("0123456789\n"), time.Time{})
	}
	if o.bytes > 100 || len(o.lines) != 10 || o.dropped != 40 {
		t.Fatalf("kept %d bytes in %d lines, dropped %d", o.bytes, len(o.lines), o.dropped)
	}
	m, _ := newTestModel(t, 100, 34, func(o *Options) { o.ScrollbackBytes = 64 << 10 })
	press(t, m, "j")
	if m.detail.out.maxBytes != 64<<10 {
		t.Fatalf("pane scrollback = %d", m.detail.out.maxBytes)
	}
}

func TestOptionsNeedOneWayToASandbox(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("no source accepted")
	}
	src := newFakeSource()
	if _, err := New(Options{Source: src, Sandboxes: []SandboxSpec{{Name: "a", Source: src}}}); err == nil {
		t.Fatal("Source and Contexts both accepted")
	}
	if _, err := New(Options{Sandboxes: []SandboxSpec{{Name: "a", Source: src}, {Name: "a", Source: src}}}); err == nil {
		t.Fatal("duplicate names accepted")
	}
}
