package daemon

import (
	"strings"
	"testing"
	"time"

	"sandtop/backend/gen/process"
)

// A subscriber that reads everything and leaves must not pin the lag
// window: once the process has exited nothing publishes again, so only the
// replay may stay (for ExitRetention, per process).
func TestHubKeepsOnlyTheReplayOnceReadersCatchUpOrLeave(t *testing.T) {
	const replay = 64 << 10
	h := newHub(replay, time.Minute)
	s := h.subscribe(false)
	chunk := make([]byte, 64<<10)
	for i := 0; i < 48; i++ { // 3 MiB, inside the lag window: nothing waits
		h.publish(kindStdout, append([]byte(nil), chunk...))
	}
	if got := h.retained(); got != 3<<20 {
		t.Fatalf("an unread subscriber should hold its 3 MiB, the log holds %d", got)
	}
	read := 0
	for {
		out, _, err, wait := s.next(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if wait != nil {
			break
		}
		for _, c := range out {
			read += len(c.data)
		}
	}
	if read != 3<<20 {
		t.Fatalf("read %d bytes", read)
	}
	if got := h.retained(); got > replay {
		t.Fatalf("after the subscriber caught up the log holds %d bytes, want at most the %d-byte replay", got, replay)
	}

	s.unsubscribe()

	// The same when a reader leaves without reading, as a cancelled stream
	// does.
	s2 := h.subscribe(false)
	for i := 0; i < 48; i++ {
		h.publish(kindStdout, append([]byte(nil), chunk...))
	}
	h.close(nil)
	s2.unsubscribe()
	if got := h.retained(); got > replay {
		t.Fatalf("after the last subscriber left the log holds %d bytes, want at most the %d-byte replay", got, replay)
	}
	if s3 := h.subscribe(true); s3.cursor != h.end-replay {
		t.Fatalf("replay starts at %d, want %d", s3.cursor, h.end-replay)
	}
}

// A fresh stalled subscriber every half second used to hold the writer for
// a whole stall limit each, so a process barely moved. The stall grace now
// comes out of one budget per process.
func TestHubStalledSubscribersShareOneBudget(t *testing.T) {
	const stall = time.Second
	h := newHub(64<<10, stall)
	chunk := make([]byte, 1<<20)
	stop := time.After(5 * time.Second)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	subs := 0
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		case <-tick.C:
			h.subscribe(false) // never reads
			subs++
		default:
		}
		h.publish(kindStdout, chunk)
	}
	// Only the writer's waits count, not a busy machine's slow publishes.
	blocked := h.waited
	if blocked > 3*time.Second {
		t.Errorf("%d stalled subscribers held the writer for %s of 5s", subs, blocked.Round(time.Millisecond))
	}
	t.Logf("%d stalled subscribers held the writer for %s of 5s", subs, blocked.Round(time.Millisecond))
	if h.retained() > h.window+int64(len(chunk)) {
		t.Errorf("the log holds %d bytes, beyond the window", h.retained())
	}
}

func TestMergeRunsJoinsConsecutiveChunksOfOneStream(t *testing.T) {
	in := []chunk{
		{kind: kindStdout, off: 0, data: []byte("ab")},
		{kind: kindStdout, off: 2, data: []byte("c")},
		{kind: kindStderr, off: 3, data: []byte("E")},
		{kind: kindStdout, off: 4, data: []byte("d")},
		{kind: kindStdout, off: 5, data: []byte("ef")},
	}
	got := mergeRuns(in)
	want := []chunk{{kindStdout, 0, []byte("abc")}, {kindStderr, 3, []byte("E")}, {kindStdout, 4, []byte("def")}}
	if len(got) != len(want) {
		t.Fatalf("got %d chunks: %+v", len(got), got)
	}
	for i := range want {
		if got[i].kind != want[i].kind || got[i].off != want[i].off || string(got[i].data) != string(want[i].data) {
			t.Errorf("chunk %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if string(in[0].data) != "ab" {
		t.Error("the hub's chunk was written into")
	}
}

// A reader that keeps reading, however slowly and with pauses shorter than
// the stall limit, loses nothing while a stalled one beside it is cut after
// the whole limit, and not before. The writer is held up only by the
// stalled one, for about the limit.
func TestHubCutsOnlyAReaderThatStalledForTheLimit(t *testing.T) {
	const stall = 400 * time.Millisecond
	h := newHub(64<<10, stall)
	slow := h.subscribe(false)
	stalled := h.subscribe(false)
	const total = 24 << 20
	done := make(chan int)
	go func() {
		read := 0
		for {
			out, final, err, wait := slow.next(1 << 20)
			if err != nil {
				t.Errorf("the slow reader was cut: %v", err)
				break
			}
			if final != nil || (wait == nil && len(out) == 0) {
				break
			}
			for _, c := range out {
				read += len(c.data)
			}
			if wait != nil {
				<-wait
				continue
			}
			time.Sleep(stall / 2) // descheduled, or slower than the writer
		}
		slow.unsubscribe()
		done <- read
	}()
	chunk := make([]byte, 1<<20)
	began := time.Now()
	for range total / len(chunk) {
		h.publish(kindStdout, chunk)
	}
	h.close(&process.ProcessEvent_EndEvent{})
	if read := <-done; read != total {
		t.Fatalf("the slow reader read %d of %d bytes", read, total)
	}
	_, _, err, _ := stalled.next(1 << 20)
	if err == nil || !strings.Contains(err.Error(), "(limit 400ms)") {
		t.Fatalf("the stalled reader: %v; want cut, naming the 400ms limit", err)
	}
	idle, _ := time.ParseDuration(strings.Fields(err.Error()[strings.Index(err.Error(), "read nothing for ")+len("read nothing for "):])[0])
	if idle < stall || idle > 3*stall {
		t.Errorf("the stalled reader was cut after %s without a read; the limit is %s: %v", idle, stall, err)
	}
	t.Logf("slow reader read all %d MiB in %s; stalled one: %v", total>>20, time.Since(began).Round(time.Millisecond), err)
}

// Once stalled subscribers have spent the budget, the writer lets go of a
// lagging subscriber instead of waiting for it. If it then finds its
// unread output gone, its stream ends saying which bytes it lost and why.
func TestHubDetachedSubscriberIsToldWhatItLost(t *testing.T) {
	const stall = 100 * time.Millisecond
	h := newHub(64<<10, stall)
	chunk := make([]byte, 1<<20)
	// Stalled subscribers, one after another, spend the budget.
	for range stallBudgetStalls + 1 {
		h.subscribe(false)
		for range h.window>>20 + 2 {
			h.publish(kindStdout, chunk)
		}
	}
	if h.budget > stall/2 {
		t.Fatalf("stalled subscribers left %s of the budget", h.budget)
	}
	late := h.subscribe(false)
	began := time.Now()
	for range 2*h.window>>20 + 2 {
		h.publish(kindStdout, chunk)
	}
	if held := time.Since(began); held > stall {
		t.Errorf("with the budget spent the writer waited %s for a subscriber", held)
	}
	_, _, err, _ := late.next(1 << 20)
	if err == nil || !strings.Contains(err.Error(), "lost output bytes") || !strings.Contains(err.Error(), "stall budget") {
		t.Fatalf("detached subscriber: %v; want it told what it lost", err)
	}
	if h.retained() > h.window+int64(len(chunk)) {
		t.Errorf("the log holds %d bytes, beyond the window", h.retained())
	}
}

// A parked subscriber is woken once by the next output and once by the
// end, and at once when what it waits on has already changed or it was
// cut off: no wake-up is lost between its last read and its parking.
func TestHubWakesParkedSubscribers(t *testing.T) {
	h := newHub(64<<10, time.Minute)
	s := h.subscribe(false)
	woken := 0
	wake := func() { woken++ }

	_, _, _, wait := s.next(1 << 10)
	s.parkUntil(wait, wake)
	if woken != 0 {
		t.Fatal("woken with nothing new")
	}
	h.publish(kindStdout, []byte("a"))
	h.publish(kindStdout, []byte("b"))
	if woken != 1 {
		t.Fatalf("two outputs woke it %d times, want once (a wake-up is used up)", woken)
	}

	out, _, _, _ := s.next(1 << 10)
	if len(out) != 2 {
		t.Fatalf("read %d chunks, want 2", len(out))
	}
	_, _, _, wait = s.next(1 << 10)
	h.publish(kindStdout, []byte("c")) // between the read and the parking
	s.parkUntil(wait, wake)
	if woken != 2 {
		t.Fatal("output that came before the parking did not wake it at once")
	}

	_, _, _, _ = s.next(1 << 10)
	_, _, _, wait = s.next(1 << 10)
	s.parkUntil(wait, wake)
	h.close(&process.ProcessEvent_EndEvent{Exited: true})
	if woken != 3 {
		t.Fatal("the end did not wake it")
	}

	h = newHub(64<<10, time.Minute)
	cut := h.subscribe(false)
	_, _, _, wait = cut.next(1 << 10)
	h.mu.Lock()
	h.cutOff(cut, time.Minute)
	h.mu.Unlock()
	cut.parkUntil(wait, wake)
	if woken != 4 {
		t.Fatal("a cut-off subscriber was parked instead of told")
	}
}
