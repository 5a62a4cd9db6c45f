package procscan

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A runtime root of 1,000 supervised groups, as a listing scans it.
func BenchmarkWriteStates1000(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		dir := filepath.Join(root, "processes", fmt.Sprintf("%08x-0000-0000-0000-000000000000", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for name, content := range map[string]string{"pid": "1234\n", "argv": "sleep\x003600\x00", "tag": "compat\n",
			"cwd": "/", "output.marks": "0123456789abcdef", "stdout.log": "", "stderr.log": "", ".problem": string(make([]byte, 512))} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		if err := WriteStates(io.Discard, root); err != nil {
			b.Fatal(err)
		}
	}
}

// The table of this machine's processes, as a listing reads it.
func BenchmarkWriteTable(b *testing.B) {
	for range b.N {
		if err := WriteTable(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
