package terminal

import (
	"context"
	"sandtop/backend/seam/control"
	"strings"
	"testing"
	"time"
)

func TestTerminalSpecValidation(t *testing.T) {
	good := Spec{Argv: []string{"/bin/sh"}, Cwd: "/", Rows: 24, Cols: 80, Grace: 100 * time.Millisecond}
	cases := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"empty argv", func(s *Spec) { s.Argv = nil }, "non-empty program"},
		{"empty program", func(s *Spec) { s.Argv = []string{""} }, "non-empty program"},
		{"NUL in argv", func(s *Spec) { s.Argv = []string{"/bin/sh", "a\x00"} }, "must not contain NUL"},
		{"no cwd", func(s *Spec) { s.Cwd = "" }, "cwd is empty"},
		{"zero rows", func(s *Spec) { s.Rows = 0 }, "terminal size 0x80"},
		{"huge cols", func(s *Spec) { s.Cols = 70000 }, "within 1..65535"},
		{"zero grace", func(s *Spec) { s.Grace = 0 }, "terminal grace must be positive and at most 596h31m23.647s (got 0s)"},
		{"negative grace", func(s *Spec) { s.Grace = -time.Second }, "terminal grace must be positive and at most 596h31m23.647s (got -1s)"},
		{"grace too long", func(s *Spec) { s.Grace = control.MaxGrace + time.Millisecond }, "(got 596h31m23.648s)"},
		{"env name with =", func(s *Spec) { s.Env = map[string]string{"A=B": "x"} }, `entry "A=B"`},
		{"empty env name", func(s *Spec) { s.Env = map[string]string{"": "x"} }, `entry ""`},
		{"NUL env value", func(s *Spec) { s.Env = map[string]string{"A": "\x00"} }, `entry "A"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := good
			c.edit(&spec)
			// A runtime with no client: validation must fail before any RPC.
			_, err := (&Service{}).Spawn(context.Background(), spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Service{}).Spawn(ctx, good); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("pre-cancelled allocation: %v", err)
	}
}
