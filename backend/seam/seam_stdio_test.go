package seam

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"sandtop/backend/daemon"
)

// lockedBuffer is an inherit sink safe for the pump's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestPipedStdinAndStdoutRoundTrip(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(Stdio{Stdin: StdinPipe(), Stdout: OutputPipe(), Stderr: OutputPipe()}, time.Second, nil, "/bin/cat")
		payload := []byte("line one\n\x00\xff binary\n")
		go func() {
			_, _ = h.Stdin.Write(payload)
			_ = h.Stdin.Close()
		}()
		got, err := io.ReadAll(h.Stdout)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("cat echoed %q (%v)", got, err)
		}
		if rest, _ := io.ReadAll(h.Stderr); len(rest) != 0 {
			t.Fatalf("stderr %q", rest)
		}
		wantExit(t, settle(t, h), 0)
	})
}

func TestBatchStdinAndInheritedOutput(t *testing.T) {
	for _, p := range bothPlanes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			var out, errb lockedBuffer
			s := newSeam(t, p.compat, func(_ *daemon.Config, rc *RuntimeConfig) { rc.Stdout, rc.Stderr = &out, &errb })
			h := s.spawn(Stdio{Stdin: StdinData("batch\x00data"), Stdout: OutputInherit(), Stderr: OutputInherit()}, time.Second, nil,
				"/bin/sh", "-c", "cat; echo e >&2")
			wantExit(t, settle(t, h), 0)
			if out.String() != "batch\x00data" || errb.String() != "e\n" {
				t.Fatalf("inherited %q / %q", out.String(), errb.String())
			}
		})
	}
}

func TestClosedPipeConsumerIsContained(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputPipe(), Stderr: OutputCollect(64)}, time.Second, nil,
			"/bin/sh", "-c", "head -c 5000000 /dev/zero; echo done >&2")
		buf := make([]byte, 10)
		if _, err := io.ReadFull(h.Stdout, buf); err != nil {
			t.Fatal(err)
		}
		_ = h.Stdout.Close() // the consumer walks away with 5 MB still coming
		wantExit(t, settle(t, h), 0)
		if got := h.Collected.Stderr.ReadFrom(0).Text; got != "done\n" {
			t.Fatalf("stderr %q", got)
		}
	})
}

func TestTerminationReleasesBlockedPipeOutput(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		// Nobody reads stdout; the pipe window fills and the stream blocks.
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputPipe(), Stderr: OutputPipe()}, 200*time.Millisecond, nil, "/bin/sh", "-c", "exec cat /dev/zero")
		time.Sleep(50 * time.Millisecond)
		terminateAndProve(t, s, h)
		o := settle(t, h)
		if o.Signal == "" {
			t.Fatalf("outcome %v", o)
		}
		if _, err := io.ReadAll(h.Stdout); err == nil || !strings.Contains(err.Error(), "terminated") {
			t.Fatalf("stdout after termination: %v", err)
		}
	})
}

func TestDrainIsBoundedWhenDescendantsHoldOutput(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(4, 1<<20), Stderr: OutputCollect(64)}, 300*time.Millisecond, nil,
			"/bin/sh", "-c", "printf 0123456789; sleep 1000 & exit 3")
		start := time.Now()
		wantExit(t, settle(t, h), 3)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("drain took %v", took)
		}
		if got := h.Collected.Stdout.ReadFrom(0); got.SpillPath != "" || !got.Lossy || got.Text != "6789" {
			t.Fatalf("read after an expired drain: %+v", got)
		}
		if s.rt.liveHandles() != 1 {
			t.Fatal("the surviving group is no longer owned")
		}
		terminateAndProve(t, s, h)
	})
}

func TestUnrequestedSignalDeathIsReportedAsSignal(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(64), time.Second, nil, "/bin/sh", "-c", "kill -SEGV $$")
		wantSignal(t, settle(t, h), "SIGSEGV")
		h2 := s.spawn(collectBoth(64), time.Second, nil, "/bin/sh", "-c", "exit 139")
		wantExit(t, settle(t, h2), 139)
	})
}
