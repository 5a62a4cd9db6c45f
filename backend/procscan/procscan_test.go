package procscan

import "testing"

// A terminal's name, as ps's tty column prints it.
func TestScannerNamesTerminalsAsPs(t *testing.T) {
	// tty_nr packs the major in bits 8-19 and the minor's low 8 bits
	// below them, its high bits from bit 20.
	nr := func(major, minor uint64) uint64 { return major<<8 | minor&0xff | (minor&^0xff)<<12 }
	for _, c := range []struct {
		nr   uint64
		want string
	}{{0, "?"}, {nr(136, 0), "pts/0"}, {nr(136, 300), "pts/300"}, {nr(137, 2), "pts/258"}, {nr(4, 1), "tty1"}, {nr(4, 65), "ttyS1"}, {nr(5, 1), "console"}, {nr(180, 3), "180,3"}} {
		if got := ttyName(c.nr); got != c.want {
			t.Errorf("tty_nr %#x: %q, want %q", c.nr, got, c.want)
		}
	}
}
