package seam_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/seam"
	"sandtop/backend/seam/control"
)

// ReadStateFile serves a state file bigger than one read in pieces, on
// sandtop's daemon (the extension) and on stock envd (control commands):
// every piece is the file's bytes at its offset, a short piece marks the
// end, the size is the file's, and a missing file is ErrFileNotFound. A
// path outside a state directory is refused before anything is read.
func TestReadStateFileReadsAFileInPiecesOnBothPlanes(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(map[bool]string{false: "extension", true: "compat"}[compat], func(t *testing.T) {
			t.Parallel()
			env := daemontest.Start(t, daemon.Config{Compat: compat})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rt, err := seam.NewRuntimeClients(ctx, env.Client.Process, env.Client.Supervisor,
				seam.RuntimeConfig{Cwd: "/", PollInterval: 50 * time.Millisecond, RuntimeRoot: env.RuntimeRoot})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Dispose(ctx)
			if rt.Info().Extension == compat {
				t.Fatalf("extension %v on a compat=%v daemon", rt.Info().Extension, compat)
			}
			want := make([]byte, 2*control.MaxReadRange+12345)
			for i := range want {
				want[i] = byte(i*7 + i/251)
			}
			dir := filepath.Join(env.RuntimeRoot, "processes", "big")
			p := filepath.Join(dir, "big.bin")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, want, 0o600); err != nil {
				t.Fatal(err)
			}
			var got []byte
			for {
				b, size, err := rt.ReadStateFile(ctx, dir, "big.bin", int64(len(got)), control.MaxReadRange)
				if err != nil {
					t.Fatal(err)
				}
				if size != int64(len(want)) {
					t.Fatalf("size %d, want %d", size, len(want))
				}
				got = append(got, b...)
				if len(b) < control.MaxReadRange {
					break
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes, want the file's %d", len(got), len(want))
			}
			if b, _, err := rt.ReadStateFile(ctx, dir, "big.bin", 1000, 10); err != nil || !bytes.Equal(b, want[1000:1010]) {
				t.Fatalf("range 1000+10: %v, %v", b, err)
			}
			if b, _, err := rt.ReadStateFile(ctx, dir, "big.bin", int64(len(want))+5, 10); err != nil || len(b) != 0 {
				t.Fatalf("past the end: %q, %v", b, err)
			}
			if _, _, err := rt.ReadStateFile(ctx, dir, "none.bin", 0, 10); !errors.Is(err, seam.ErrFileNotFound) {
				t.Fatalf("missing file: %v", err)
			}
			for _, bad := range [][2]string{{dir, "../big/big.bin"}, {dir, ""}, {env.RuntimeRoot, "big.bin"}, {dir + "/", "big.bin"}} {
				if _, _, err := rt.ReadStateFile(ctx, bad[0], bad[1], 0, 10); err == nil {
					t.Fatalf("ReadStateFile(%q, %q) read outside a state directory", bad[0], bad[1])
				}
			}
		})
	}
}
