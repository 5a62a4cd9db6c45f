package vt

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
)

// Recorded with: go run ./vt/internal/recordsession (80x24, xterm-256color).
type recording struct {
	name string
	raw  []byte
	mark int // offset just before the quit keys: the program's full screen
}

func loadRecording(t testing.TB, name string) recording {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".raw"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join("testdata", name+".mark"))
	if err != nil {
		t.Fatal(err)
	}
	mark, err := strconv.Atoi(strings.TrimSpace(string(m)))
	if err != nil || mark > len(raw) {
		t.Fatalf("bad mark %q", m)
	}
	return recording{name, raw, mark}
}

func screenAfter(chunks [][]byte) *Screen {
	e := NewVT10x(80, 24)
	for _, c := range chunks {
		_, _ = e.Write(c)
	}
	return Capture(e)
}

func randomChunks(p []byte, seed int64) [][]byte {
	r := rand.New(rand.NewSource(seed))
	var out [][]byte
	for len(p) > 0 {
		n := min(1+r.Intn(64), len(p))
		if r.Intn(8) == 0 {
			n = min(1+r.Intn(4096), len(p))
		}
		out = append(out, p[:n])
		p = p[n:]
	}
	return out
}

func TestRecordedSessions(t *testing.T) {
	checks := map[string]func(t *testing.T, s *Screen){
		"top": func(t *testing.T, s *Screen) {
			if !strings.HasPrefix(s.Line(0), "top - ") || !strings.Contains(s.Text(), "PID USER") {
				t.Errorf("top's screen not recognised:\n%s", s.Text())
			}
		},
		"vim": func(t *testing.T, s *Screen) {
			if !s.Modes.AltScreen || !s.Modes.BracketedPaste {
				t.Errorf("vim modes = %+v", s.Modes)
			}
			if !strings.Contains(s.Text(), "typed line") || !strings.Contains(s.Line(16), "日本語 and ünïcödé") {
				t.Errorf("vim's screen not recognised:\n%s", s.Text())
			}
			if !strings.HasSuffix(s.Line(23), "All") {
				t.Errorf("vim's ruler misplaced: %q", s.Line(23))
			}
		},
	}
	for _, name := range []string{"top", "vim"} {
		rec := loadRecording(t, name)
		for _, cut := range []struct {
			label string
			n     int
		}{{"screen", rec.mark}, {"final", len(rec.raw)}} {
			t.Run(name+"/"+cut.label, func(t *testing.T) {
				data := rec.raw[:cut.n]
				want := screenAfter([][]byte{data})
				if cut.label == "screen" {
					checks[name](t, want)
				}
				for seed := int64(1); seed <= 5; seed++ {
					if got := screenAfter(randomChunks(data, seed)); !got.Equal(want) {
						t.Fatalf("random chunks (seed %d) differ:\n%s\nwant:\n%s", seed, got.Text(), want.Text())
					}
				}
				bytewise := make([][]byte, len(data))
				for i := range data {
					bytewise[i] = data[i : i+1]
				}
				if got := screenAfter(bytewise); !got.Equal(want) {
					t.Fatalf("byte-by-byte differs:\n%s", got.Text())
				}

				sb := NewScrollback(64 << 10)
				for _, c := range randomChunks(data, 9) {
					_, _ = sb.Write(c)
				}
				e := NewVT10x(80, 24)
				if _, err := sb.Replay(e); err != nil {
					t.Fatal(err)
				}
				if got := Capture(e); !got.Equal(want) {
					t.Fatalf("scrollback replay differs:\n%s", got.Text())
				}

				term := NewTerm(80, 24, TermOptions{})
				defer term.Close()
				for _, c := range randomChunks(data, 11) {
					_, _ = term.Write(c)
				}
				waitCaughtUp(t, term)
				if got := term.Snapshot(); !got.Equal(want) {
					t.Fatalf("Term differs:\n%s", got.Text())
				}
			})
		}
	}
}

// waitCaughtUp polls until the Term has parsed everything written.
func waitCaughtUp(t testing.TB, term *Term) {
	t.Helper()
	testwait.NoError(t, 10*time.Second, func() error {
		if st := term.Stats(); st.Parsed != st.Written {
			return fmt.Errorf("Term did not catch up: %+v", st)
		}
		return nil
	})
}
