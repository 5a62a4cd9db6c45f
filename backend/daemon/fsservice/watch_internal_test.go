package fsservice

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	fspb "sandtop/backend/gen/filesystem"
)

func newTestService(t *testing.T, idle time.Duration) (*Service, string) {
	t.Helper()
	dir := t.TempDir()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	s := New(Config{
		Identify:    func(string) (Identity, error) { return Identity{Home: dir}, nil },
		Done:        done,
		WatcherIdle: idle,
	})
	return s, dir
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// A polling watcher whose client never polls again (it went away without
// RemoveWatcher) is removed after the idle time, and its inotify instance
// closed; one that is polled lives on.
func TestAbandonedPollingWatcherExpires(t *testing.T) {
	const idle = 300 * time.Millisecond
	s, dir := newTestService(t, idle)
	ctx := context.Background()
	before := openFDs(t)
	create := func() string {
		res, err := s.CreateWatcher(ctx, connect.NewRequest(&fspb.CreateWatcherRequest{Path: dir}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg.GetWatcherId()
	}
	poll := func(wid string) error {
		_, err := s.GetWatcherEvents(ctx, connect.NewRequest(&fspb.GetWatcherEventsRequest{WatcherId: wid}))
		return err
	}
	abandoned, kept := create(), create()
	began := time.Now()
	for time.Since(began) < 4*idle {
		if err := poll(kept); err != nil {
			t.Fatalf("a watcher polled every %s was removed after %s: %v", idle/3, time.Since(began).Round(time.Millisecond), err)
		}
		time.Sleep(idle / 3)
	}
	err := poll(abandoned)
	if connect.CodeOf(err) != connect.CodeNotFound || !strings.Contains(err.Error(), "not polled for 300ms") {
		t.Fatalf("abandoned watcher after %s: %v; want not found, saying why", 4*idle, err)
	}
	if _, err := s.RemoveWatcher(ctx, connect.NewRequest(&fspb.RemoveWatcherRequest{WatcherId: kept})); err != nil {
		t.Fatal(err)
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open before the watchers, %d after both went", before, after)
	}
}

// When no inotify instance can be made, CreateWatcher and WatchDir's open
// say so with ResourceExhausted, not Internal. (The open-file limit stands
// in for the user's inotify limit, which the test must not use up for
// everyone running as this user: both give EMFILE.)
func TestWatcherExhaustionIsResourceExhausted(t *testing.T) {
	s, dir := newTestService(t, time.Minute)
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(openFDs(t) + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
	ctx := context.Background()
	var err error
	for range 64 {
		if _, err = s.CreateWatcher(ctx, connect.NewRequest(&fspb.CreateWatcherRequest{Path: dir})); err != nil {
			break
		}
	}
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "no inotify instance left") {
		t.Fatalf("CreateWatcher at the limit: %v; want resource_exhausted, saying what ran out", err)
	}
	t.Log(err)
}
