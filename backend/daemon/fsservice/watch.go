package fsservice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	fspb "sandtop/backend/gen/filesystem"
)

// maxPendingEvents bounds a polling watcher's queue: a client that stops
// polling gets an error on its next poll instead of growing the daemon.
const maxPendingEvents = 10000

// networkFS are the filesystems whose changes inotify may never see.
var networkFS = map[int64]bool{
	0x6969:     true, // NFS
	0xFF534D42: true, // CIFS
	0x517B:     true, // SMB
	0xFE534D42: true, // SMB2
	0x65735546: true, // FUSE
}

// dirWatch is one inotify watch on a directory (and, if recursive, every
// directory below it, including ones created later).
type dirWatch struct {
	id        Identity
	root      string
	recursive bool
	withEntry bool
	w         *fsnotify.Watcher
}

func (s *Service) openWatch(id Identity, p string, recursive, withEntry, allowNetwork bool) (*dirWatch, error) {
	dw := &dirWatch{id: id, root: p, recursive: recursive, withEntry: withEntry}
	err := id.do(func() error {
		fi, err := os.Stat(p)
		if err != nil {
			return fsError(err, "watch %s", p)
		}
		if !fi.IsDir() {
			return errorf(connect.CodeInvalidArgument, "path %s is not a directory", p)
		}
		if !allowNetwork {
			var st unix.Statfs_t
			if err := unix.Statfs(p, &st); err != nil {
				return fsError(err, "watch %s", p)
			}
			if networkFS[int64(st.Type)] {
				return errorf(connect.CodeInvalidArgument, "path %s is on a network filesystem: set allow_network_mounts to watch it", p)
			}
		}
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return watchLimit(err, p)
		}
		dw.w = w
		if err := dw.add(p); err != nil {
			w.Close()
			return watchLimit(err, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return dw, nil
}

// add watches dir, and its subdirectories if recursive. It runs under the
// identity, so inotify sees only directories the user may read. (fsnotify's
// own recursion is not public and would register new directories with the
// daemon's rights.)
func (dw *dirWatch) add(dir string) error {
	if !dw.recursive {
		return dw.w.Add(dir)
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // unreadable or vanished below the root: not watched
		}
		if !d.IsDir() {
			return nil
		}
		if err := dw.w.Add(path); err != nil && path == dir {
			return err
		}
		return nil
	})
}

func (dw *dirWatch) Close() { _ = dw.w.Close() }

// events converts one inotify event into envd's events (one per operation
// it carries) and, for a directory created under a recursive watch, starts
// watching it.
func (dw *dirWatch) events(e fsnotify.Event) ([]*fspb.FilesystemEvent, error) {
	name, err := filepath.Rel(dw.root, e.Name)
	if err != nil {
		return nil, err
	}
	if dw.recursive && e.Has(fsnotify.Create) {
		_ = dw.id.do(func() error {
			if fi, err := os.Lstat(e.Name); err == nil && fi.IsDir() {
				_ = dw.add(e.Name)
			}
			return nil
		})
	}
	var out []*fspb.FilesystemEvent
	for _, m := range []struct {
		op fsnotify.Op
		t  fspb.EventType
	}{
		{fsnotify.Create, fspb.EventType_EVENT_TYPE_CREATE},
		{fsnotify.Rename, fspb.EventType_EVENT_TYPE_RENAME},
		{fsnotify.Chmod, fspb.EventType_EVENT_TYPE_CHMOD},
		{fsnotify.Write, fspb.EventType_EVENT_TYPE_WRITE},
		{fsnotify.Remove, fspb.EventType_EVENT_TYPE_REMOVE},
	} {
		if !e.Has(m.op) {
			continue
		}
		ev := &fspb.FilesystemEvent{Name: name, Type: m.t}
		// A removed or renamed-away path may already hold a new entry;
		// only events about the entry that is there carry its info.
		if dw.withEntry && m.t != fspb.EventType_EVENT_TYPE_REMOVE && m.t != fspb.EventType_EVENT_TYPE_RENAME {
			_ = dw.id.do(func() (err error) {
				ev.Entry, err = newNames().entryInfo(e.Name)
				return err
			})
		}
		out = append(out, ev)
	}
	return out, nil
}

// watchLimit explains the errors inotify gives when a limit is reached:
// EMFILE is the user's inotify instances (or the daemon's open files) used
// up, ENOSPC the user's watches (not a full disk).
func watchLimit(err error, p string) error {
	switch {
	case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE):
		return errorf(connect.CodeResourceExhausted, "watch %s: no inotify instance left: the user's limit (fs.inotify.max_user_instances) or the daemon's open-file limit is reached; remove watchers no longer needed (RemoveWatcher, or end WatchDir streams); abandoned polling watchers expire", p)
	case errors.Is(err, unix.ENOSPC):
		return errorf(connect.CodeResourceExhausted, "watch %s: no inotify watch left: the user's limit (fs.inotify.max_user_watches) is reached; watch fewer directories (recursive watches take one per directory)", p)
	}
	return fsError(err, "watch %s", p)
}

func watchFailed(err error) error {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		return errorf(connect.CodeResourceExhausted, "watch: too many changes at once, events were lost: %v", err)
	}
	return errorf(connect.CodeInternal, "watch: %v", err)
}

// WatchDir streams the changes under a directory: start, then events, with
// keepalives when idle, until the client leaves or the daemon stops.
func (s *Service) WatchDir(ctx context.Context, req *connect.Request[fspb.WatchDirRequest], stream *connect.ServerStream[fspb.WatchDirResponse]) error {
	id, p, err := s.target(req.Header(), req.Msg.GetPath())
	if err != nil {
		return err
	}
	dw, err := s.openWatch(id, p, req.Msg.GetRecursive(), req.Msg.GetIncludeEntry(), req.Msg.GetAllowNetworkMounts())
	if err != nil {
		return err
	}
	defer dw.Close()
	if err := stream.Send(&fspb.WatchDirResponse{Event: &fspb.WatchDirResponse_Start{Start: &fspb.WatchDirResponse_StartEvent{}}}); err != nil {
		return err
	}
	interval := 90 * time.Second
	if s.cfg.Keepalive != nil {
		interval = s.cfg.Keepalive(req.Header())
	}
	ka := time.NewTicker(interval)
	defer ka.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.cfg.Done:
			return errorf(connect.CodeUnavailable, "daemon is shutting down")
		case <-ka.C:
			if err := stream.Send(&fspb.WatchDirResponse{Event: &fspb.WatchDirResponse_Keepalive{Keepalive: &fspb.WatchDirResponse_KeepAlive{}}}); err != nil {
				return err
			}
		case err := <-dw.w.Errors:
			return watchFailed(err)
		case e, ok := <-dw.w.Events:
			if !ok {
				return errorf(connect.CodeInternal, "watch: inotify closed")
			}
			evs, err := dw.events(e)
			if err != nil {
				return errorf(connect.CodeInternal, "watch: %v", err)
			}
			for _, ev := range evs {
				if err := stream.Send(&fspb.WatchDirResponse{Event: &fspb.WatchDirResponse_Filesystem{Filesystem: ev}}); err != nil {
					return err
				}
			}
			if len(evs) > 0 {
				ka.Reset(interval)
			}
		}
	}
}

// pollWatcher keeps a dirWatch's events until GetWatcherEvents takes them.
type pollWatcher struct {
	dw   *dirWatch
	stop chan struct{}
	done chan struct{}
	// idle removes the watcher once its client has not polled for the
	// service's WatcherIdle; polled is when it last did (under s.mu).
	idle   *time.Timer
	polled time.Time

	mu      sync.Mutex
	pending []*fspb.FilesystemEvent
	err     error // set once; the watcher stops collecting
}

func (pw *pollWatcher) collect() {
	defer close(pw.done)
	fail := func(err error) {
		pw.mu.Lock()
		pw.err = err
		pw.mu.Unlock()
	}
	for {
		select {
		case <-pw.stop:
			return
		case err := <-pw.dw.w.Errors:
			fail(watchFailed(err))
			return
		case e, ok := <-pw.dw.w.Events:
			if !ok {
				fail(errorf(connect.CodeInternal, "watch: inotify closed"))
				return
			}
			evs, err := pw.dw.events(e)
			if err != nil {
				fail(errorf(connect.CodeInternal, "watch: %v", err))
				return
			}
			pw.mu.Lock()
			pw.pending = append(pw.pending, evs...)
			over := len(pw.pending) > maxPendingEvents
			pw.mu.Unlock()
			if over {
				fail(errorf(connect.CodeResourceExhausted, "watcher holds more than %d events: poll more often", maxPendingEvents))
				return
			}
		}
	}
}

func (pw *pollWatcher) close() {
	if pw.idle != nil {
		pw.idle.Stop()
	}
	close(pw.stop)
	pw.dw.Close()
	<-pw.done
}

func (s *Service) CreateWatcher(_ context.Context, req *connect.Request[fspb.CreateWatcherRequest]) (*connect.Response[fspb.CreateWatcherResponse], error) {
	id, p, err := s.target(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	dw, err := s.openWatch(id, p, req.Msg.GetRecursive(), req.Msg.GetIncludeEntry(), req.Msg.GetAllowNetworkMounts())
	if err != nil {
		return nil, err
	}
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	wid := "w" + hex.EncodeToString(raw[:])
	pw := &pollWatcher{dw: dw, stop: make(chan struct{}), done: make(chan struct{}), polled: time.Now()}
	go pw.collect()
	s.mu.Lock()
	s.watchers[wid] = pw
	pw.idle = time.AfterFunc(s.cfg.WatcherIdle, func() { s.expire(wid, pw) })
	s.mu.Unlock()
	return connect.NewResponse(&fspb.CreateWatcherResponse{WatcherId: wid}), nil
}

// expire removes watcher wid if its client has not polled it for
// WatcherIdle, and otherwise looks again when that would be so.
func (s *Service) expire(wid string, pw *pollWatcher) {
	s.mu.Lock()
	if s.watchers[wid] != pw {
		s.mu.Unlock()
		return
	}
	if left := s.cfg.WatcherIdle - time.Since(pw.polled); left > 0 {
		pw.idle.Reset(left)
		s.mu.Unlock()
		return
	}
	delete(s.watchers, wid)
	s.mu.Unlock()
	s.cfg.Logger.Info("polling watcher expired", "watcher", wid, "path", clip(pw.dw.root), "idle", s.cfg.WatcherIdle)
	pw.close()
}

// watcher finds wid, and notes that its client polled it.
func (s *Service) watcher(wid string) (*pollWatcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pw, ok := s.watchers[wid]
	if !ok {
		return nil, s.notFound(wid)
	}
	pw.polled = time.Now()
	return pw, nil
}

func (s *Service) notFound(wid string) error {
	return connect.NewError(connect.CodeNotFound, fmt.Errorf("watcher %q not found (a watcher not polled for %s is removed)", clip(wid), s.cfg.WatcherIdle))
}

// GetWatcherEvents hands over (and forgets) the events collected so far, or
// the error that stopped the watcher.
func (s *Service) GetWatcherEvents(_ context.Context, req *connect.Request[fspb.GetWatcherEventsRequest]) (*connect.Response[fspb.GetWatcherEventsResponse], error) {
	pw, err := s.watcher(req.Msg.GetWatcherId())
	if err != nil {
		return nil, err
	}
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.err != nil {
		return nil, pw.err
	}
	evs := pw.pending
	pw.pending = nil
	return connect.NewResponse(&fspb.GetWatcherEventsResponse{Events: evs}), nil
}

func (s *Service) RemoveWatcher(_ context.Context, req *connect.Request[fspb.RemoveWatcherRequest]) (*connect.Response[fspb.RemoveWatcherResponse], error) {
	wid := req.Msg.GetWatcherId()
	s.mu.Lock()
	pw, ok := s.watchers[wid]
	delete(s.watchers, wid)
	s.mu.Unlock()
	if !ok {
		return nil, s.notFound(wid)
	}
	pw.close()
	return connect.NewResponse(&fspb.RemoveWatcherResponse{}), nil
}

func (s *Service) removeAllWatchers() {
	s.mu.Lock()
	all := s.watchers
	s.watchers = map[string]*pollWatcher{}
	s.mu.Unlock()
	for _, pw := range all {
		pw.close()
	}
}
