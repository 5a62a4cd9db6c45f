package screenshots

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/ui"
)

// driver runs a model like Bubble Tea does (commands on goroutines, Update
// and View on one goroutine), but lets the test read View between messages.
type driver struct {
	t    *testing.T
	m    *ui.Model
	msgs chan tea.Msg
}

func newDriver(t *testing.T, m *ui.Model, w, h int) *driver {
	d := &driver{t: t, m: m, msgs: make(chan tea.Msg, 256)}
	d.exec(m.Init())
	d.update(tea.WindowSizeMsg{Width: w, Height: h})
	return d
}

func (d *driver) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			d.msgs <- msg
		}
	}()
}

func (d *driver) update(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			d.exec(c)
		}
	case tea.QuitMsg:
	default:
		_, cmd := d.m.Update(msg)
		d.exec(cmd)
	}
}

// keys sends key presses (runes or names Bubble Tea knows).
func (d *driver) keys(keys ...tea.KeyPressMsg) {
	for _, k := range keys {
		d.update(k)
	}
}

func runes(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }

func key(code rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code} }

// until processes messages until cond holds on the view, or fails.
func (d *driver) until(what string, timeout time.Duration, cond func(view string) bool) {
	d.t.Helper()
	deadline := time.After(timeout)
	for !cond(d.m.View().Content) {
		select {
		case msg := <-d.msgs:
			d.update(msg)
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s; screen:\n%s", what, d.m.View().Content)
		}
	}
}

// settle processes messages for a while (frames, snapshots).
func (d *driver) settle(dur time.Duration) {
	end := time.After(dur)
	for {
		select {
		case msg := <-d.msgs:
			d.update(msg)
		case <-end:
			return
		}
	}
}
