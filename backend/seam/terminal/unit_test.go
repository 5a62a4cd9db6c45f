package terminal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTerminalBoundaryFilterDropsBootstrapAcrossSplits(t *testing.T) {
	const marker = "sandtop-boundary:0123456789abcdef0123456789abcdef"
	stream := "Welcome banner\r\n$ exec /bin/bash runner\r\n" + marker + "user$ "
	// Every split point, including ones inside the marker.
	for cut1 := 0; cut1 <= len(stream); cut1 += 3 {
		for cut2 := cut1; cut2 <= len(stream); cut2 += 7 {
			f := newBoundaryFilter(marker)
			var got []byte
			for _, part := range []string{stream[:cut1], stream[cut1:cut2], stream[cut2:]} {
				got = append(got, f.feed([]byte(part))...)
			}
			if string(got) != "user$ " {
				t.Fatalf("cuts %d,%d: got %q", cut1, cut2, got)
			}
			if len(f.pending) != 0 {
				t.Fatalf("cuts %d,%d: pending kept after boundary", cut1, cut2)
			}
		}
	}
}

func TestTerminalBoundaryFilterHoldsLittleBeforeMarker(t *testing.T) {
	const marker = "sandtop-boundary:0123456789abcdef0123456789abcdef"
	f := newBoundaryFilter(marker)
	for range 1000 {
		if out := f.feed(bytes.Repeat([]byte("x"), 4096)); len(out) != 0 {
			t.Fatal("bytes leaked before the boundary")
		}
	}
	if len(f.pending) >= len(marker) {
		t.Fatalf("pending grew to %d", len(f.pending))
	}
	// Everything after the marker passes, even a second marker.
	if out := f.feed([]byte(marker + "a" + marker)); string(out) != "a"+marker {
		t.Fatalf("got %q", out)
	}
}

func TestTerminalOutputEndsAfterQueuedBytes(t *testing.T) {
	o := newTerminalOutput(64)
	o.push([]byte("hello "))
	o.push([]byte("world"))
	o.close(nil)
	o.push([]byte("late"))
	got, err := io.ReadAll(o)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestTerminalOutputReportsTransportError(t *testing.T) {
	o := newTerminalOutput(64)
	boom := errors.New("boom")
	o.push([]byte("ab"))
	o.close(boom)
	got, err := io.ReadAll(o)
	if string(got) != "ab" || !errors.Is(err, boom) {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestTerminalOutputDropsOldestWhenConsumerIsSlow(t *testing.T) {
	o := newTerminalOutput(10)
	o.push([]byte("0123456"))
	o.push([]byte("789abc"))       // 3 oldest dropped
	o.push([]byte("WXYZWXYZWXYZ")) // larger than the limit on its own
	o.close(nil)
	got, _ := io.ReadAll(o)
	if string(got) != "YZWXYZWXYZ" { // the newest 10 bytes
		t.Fatalf("got %q", got)
	}
	if d := o.droppedBytes(); d != 7+6+12-10 {
		t.Fatalf("dropped %d", d)
	}
}

func TestTerminalOutputKeepsSplitUTF8Intact(t *testing.T) {
	o := newTerminalOutput(1024)
	text := []byte("π→€ ok")
	go func() {
		for i := range text {
			o.push(text[i : i+1])
		}
		o.close(nil)
	}()
	got, _ := io.ReadAll(o)
	if !utf8.Valid(got) || string(got) != string(text) {
		t.Fatalf("got %q", got)
	}
}

func TestTerminalOutputReadBlocksUntilData(t *testing.T) {
	o := newTerminalOutput(16)
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 8)
		n, _ := o.Read(b)
		got <- string(b[:n])
	}()
	select {
	case s := <-got:
		t.Fatalf("Read returned %q before any data", s)
	case <-time.After(20 * time.Millisecond):
	}
	o.push([]byte("x"))
	select {
	case s := <-got:
		if s != "x" {
			t.Fatalf("got %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read did not wake up")
	}
}

func TestTerminalOpsCancelAndJoinInFlightCalls(t *testing.T) {
	ops := newTerminalOps()
	ctx, end, err := ops.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() {
		defer end()
		<-ctx.Done() // an RPC that only returns when cancelled
		finished <- opError(ctx, ctx.Err())
	}()
	ops.closeAndJoin()
	select {
	case err := <-finished:
		if !errors.Is(err, errTerminalTerminating) {
			t.Fatalf("in-flight call got %v", err)
		}
	default:
		t.Fatal("closeAndJoin returned before the in-flight call settled")
	}
	if _, _, err := ops.begin(context.Background()); !errors.Is(err, errTerminalTerminating) {
		t.Fatalf("new call after terminate: %v", err)
	}
	ops.closeAndJoin() // idempotent
	if !ops.terminating() {
		t.Fatal("not terminating")
	}
}

func TestTerminalOpsCallerCancellationIsNotTermination(t *testing.T) {
	ops := newTerminalOps()
	parent, cancel := context.WithCancel(context.Background())
	ctx, end, _ := ops.begin(parent)
	cancel()
	<-ctx.Done()
	if err := opError(ctx, ctx.Err()); !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "terminating") {
		t.Fatalf("got %v", err)
	}
	end()
	ops.closeAndJoin()
}
