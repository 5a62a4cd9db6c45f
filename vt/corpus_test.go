package vt

import (
	"fmt"
	"math/rand"
)

// logCorpus generates n bytes of coloured log output like a busy service
// prints: timestamps, coloured levels, some 256- and 24-bit colour, bold
// keys. Every line ends with a reset, as loggers do.
func logCorpus(n int, seed int64) []byte {
	r := rand.New(rand.NewSource(seed))
	levels := []string{"\x1b[32mINFO\x1b[0m", "\x1b[33mWARN\x1b[0m", "\x1b[1;31mERROR\x1b[0m", "\x1b[36mDEBUG\x1b[0m"}
	words := []string{"request", "served", "user", "cache", "miss", "latency", "upstream", "retry", "ok", "queue", "flush", "worker"}
	out := make([]byte, 0, n+256)
	for i := 0; len(out) < n; i++ {
		out = fmt.Appendf(out, "\x1b[2m2024-05-01T12:%02d:%02d.%03dZ\x1b[0m %s ", i/60%60, i%60, i%1000, levels[r.Intn(len(levels))])
		out = fmt.Appendf(out, "\x1b[38;5;%dm%s\x1b[0m ", 16+r.Intn(216), words[r.Intn(len(words))])
		for k := 3 + r.Intn(8); k > 0; k-- {
			out = fmt.Appendf(out, "%s=%d ", words[r.Intn(len(words))], r.Intn(100000))
		}
		if i%7 == 0 {
			out = fmt.Appendf(out, "\x1b[38;2;%d;%d;%dmtrace=%x\x1b[0m", r.Intn(256), r.Intn(256), r.Intn(256), r.Int63())
		}
		out = append(out, "\r\n"...)
	}
	return out
}

// lastLines returns what a cols×rows screen shows after printing corpus:
// the expected final screen computed the slow, sure way.
func screenOf(corpus []byte, cols, rows int) *Screen {
	e := NewVT10x(cols, rows)
	_, _ = e.Write(corpus)
	return Capture(e)
}
