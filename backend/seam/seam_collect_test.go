package seam

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
)

func TestOutputReaderTailAndCursors(t *testing.T) {
	r := newOutputReader(4, "/spill", 100)
	r.append([]byte("ab"))
	r.append([]byte("cdef"))
	if got := r.ReadFrom(0); !got.Lossy || got.Text != "cdef" || got.NextOffset != 6 || got.SpillPath != "" {
		t.Fatalf("ReadFrom(0) before sealing = %+v", got)
	}
	if r.sealSpill(false) != "" {
		t.Fatal("a complete, needed spill was withdrawn")
	}
	if got := r.ReadFrom(0); got.SpillPath != "/spill" {
		t.Fatalf("sealed lossy read has no spill: %+v", got)
	}
	for from, want := range map[int64]string{2: "cdef", 5: "f", 6: "", 99: ""} {
		got := r.ReadFrom(from)
		if got.Lossy || got.Text != want || got.NextOffset != 6 || got.SpillPath != "" {
			t.Errorf("ReadFrom(%d) = %+v, want %q", from, got, want)
		}
	}
}

func TestOutputReaderWithholdsAbsentOrOverCapSpills(t *testing.T) {
	noSpill := newOutputReader(3, "", 0)
	noSpill.append([]byte("abcdef"))
	noSpill.sealSpill(false)
	if got := noSpill.ReadFrom(0); got.SpillPath != "" || got.Text != "def" || !got.Lossy {
		t.Fatalf("%+v", got)
	}
	over := newOutputReader(3, "/s", 5)
	over.append([]byte("abcdef"))
	if over.sealSpill(false) != "/s" {
		t.Fatal("an over-cap spill was not withdrawn")
	}
	if got := over.ReadFrom(0); got.SpillPath != "" {
		t.Fatalf("over-cap spill advertised: %+v", got)
	}
	small := newOutputReader(10, "/s", 50)
	small.append([]byte("abc"))
	if small.sealSpill(false) != "/s" {
		t.Fatal("an unneeded spill was kept")
	}
	expired := newOutputReader(2, "/s", 50)
	expired.append([]byte("abc"))
	if expired.sealSpill(true) != "/s" {
		t.Fatal("a spill cut by the drain bound was kept")
	}
}

// TestOutputReaderRingIsByteExact checks the ring against a plain model.
func TestOutputReaderRingIsByteExact(t *testing.T) {
	for _, max := range []int64{1, 7, 4096, 10000} {
		r := newOutputReader(max, "", 0)
		var all []byte
		for i := 0; i < 300; i++ {
			chunk := bytes.Repeat([]byte{byte(i)}, (i*37)%5000)
			all = append(all, chunk...)
			r.append(chunk)
			want := all[max64(0, int64(len(all))-max):]
			if got := r.ReadFrom(0); !bytes.Equal(got.Bytes, want) || got.NextOffset != int64(len(all)) {
				t.Fatalf("max %d after %d chunks: tail of %d bytes differs", max, i, len(got.Bytes))
			}
		}
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func TestCollectTailsAreByteExactOverTheWire(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		// 256 KiB of every byte value, more than the 100 KiB tail.
		script := `p=$(printf "\\\\%03o" $(seq 0 255) | tr -d "\n"); for ((i=0;i<1024;i++)); do printf "$p"; done`
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(100_000, 1<<20), Stderr: OutputCollect(10)}, time.Second, nil, "/bin/bash", "-c", script)
		wantExit(t, settle(t, h), 0)
		var pattern []byte
		for i := 0; i < 256; i++ {
			pattern = append(pattern, byte(i))
		}
		full := bytes.Repeat(pattern, 1024)
		got := h.Collected.Stdout.ReadFrom(0)
		if got.NextOffset != int64(len(full)) || !got.Lossy || !bytes.Equal(got.Bytes, full[len(full)-100_000:]) {
			t.Fatalf("tail: next %d lossy %v len %d", got.NextOffset, got.Lossy, len(got.Bytes))
		}
		if got.SpillPath == "" {
			t.Fatal("complete spill not advertised on a lossy read")
		}
		spill, err := s.rt.control.ReadFile(s.ctx(), got.SpillPath)
		if err != nil || !bytes.Equal(spill, full) {
			t.Fatalf("spill holds %d bytes (err %v), want the whole %d-byte stream", len(spill), err, len(full))
		}
		mid := h.Collected.Stdout.ReadFrom(int64(len(full)) - 3)
		if mid.Lossy || !bytes.Equal(mid.Bytes, []byte{253, 254, 255}) || mid.SpillPath != "" {
			t.Fatalf("ReadFrom(end-3) = %+v", mid)
		}
	})
}

func TestCollectWithdrawsAnOverCapSpill(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(4, 8), Stderr: OutputCollect(4, 100)}, time.Second, nil,
			"/bin/sh", "-c", "printf 0123456789; printf ab >&2")
		wantExit(t, settle(t, h), 0)
		if got := h.Collected.Stdout.ReadFrom(0); got.SpillPath != "" || got.Text != "6789" {
			t.Fatalf("stdout read %+v", got)
		}
		if got := h.Collected.Stderr.ReadFrom(0); got.Lossy || got.SpillPath != "" || got.Text != "ab" {
			t.Fatalf("stderr read %+v", got)
		}
		for _, name := range []string{"stdout.log", "stderr.log"} {
			testwait.For(t, 10*time.Second, name+" removed", func() bool {
				_, err := s.rt.control.ReadFile(context.Background(), h.StateDir()+"/"+name)
				return errors.Is(err, ErrFileNotFound)
			})
		}
	})
}

func TestCollectDecodesUTF8SplitAcrossChunks(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1<<10), time.Second, nil, "/bin/sh", "-c", `printf 'a\303'; sleep 0.05; printf '\251b'`)
		wantExit(t, settle(t, h), 0)
		if got := h.Collected.Stdout.ReadFrom(0).Text; got != "aéb" {
			t.Fatalf("text %q", got)
		}
		if got := h.Collected.Stdout.ReadFrom(2).Text; got != "\uFFFDb" {
			t.Fatalf("read from inside the character: %q", got)
		}
		if !strings.HasSuffix(h.Collected.Stdout.ReadFrom(1).Text, "éb") {
			t.Fatal("read at the boundary broke the character")
		}
	})
}

// A stream that fills its pipe gets a larger pipe and larger reads (the
// shim and the daemon both do this); every byte must arrive as written
// across that switch. cat writes 128 KiB blocks, so the first read finds
// the 64 KiB pipe full.
func TestFastStreamArrivesByteExact(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		data := make([]byte, 4<<20)
		for i := range data {
			data[i] = byte(i*7 + i>>12)
		}
		file := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(8 << 20), Stderr: OutputCollect(1024)}, time.Second, nil, "/bin/cat", file)
		wantExit(t, settle(t, h), 0)
		got := h.Collected.Stdout.ReadFrom(0)
		if !bytes.Equal(got.Bytes, data) {
			i := 0
			for i < len(got.Bytes) && i < len(data) && got.Bytes[i] == data[i] {
				i++
			}
			t.Fatalf("collected %d of %d bytes; first difference at %d", len(got.Bytes), len(data), i)
		}
	})
}
