package seam

import "testing"

// The daemon reads a group's stdout and stderr separately, so the program's
// first stderr bytes can arrive before stdout's published line. They are
// the program's all the same (this once lost a quick program's stderr).
func TestWrapperHeadKeepsStderrThatOvertakesThePublication(t *testing.T) {
	var w wrapperHead
	var got []byte
	for _, chunk := range []string{"bash: warning: x\n", "sandtop-published 42\ne", "rr"} {
		got = append(got, w.stderr([]byte(chunk))...)
	}
	if string(got) != "err" || string(w.wrapperNoise()) != "bash: warning: x\n" {
		t.Fatalf("program stderr %q, wrapper's %q", got, w.wrapperNoise())
	}
	out, p := w.stdout([]byte("sandtop-published 42\nout"))
	if p == nil || p.err != nil || p.pgid != 42 || string(out) != "out" {
		t.Fatalf("stdout %q publication %+v", out, p)
	}
	if out, p := w.stdout([]byte("more")); p != nil || string(out) != "more" {
		t.Fatalf("after the line: %q %+v", out, p)
	}
}

func TestWrapperHeadRefusesAnUnpublishedStdout(t *testing.T) {
	var w wrapperHead
	if _, p := w.stdout([]byte("hello\n")); p == nil || p.err == nil {
		t.Fatalf("publication %+v", p)
	}
}
