// Package fsservice is the filesystem half of envd on sandtop's daemon: the
// filesystem.Filesystem Connect service (Stat, MakeDir, Move, ListDir,
// Remove, WatchDir and the polling watchers) and envd's HTTP GET/POST
// /files. Every operation runs with the requesting user's file-access
// rights (see Identity.do), so a request can reach only what that user can.
package fsservice

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	fspb "sandtop/backend/gen/filesystem"
	"sandtop/backend/gen/filesystem/filesystemconnect"
)

// Config connects the service to its daemon.
type Config struct {
	// Identify maps a user name ("" for the default user) to the identity
	// a request acts as. Its errors are Connect errors.
	Identify func(name string) (Identity, error)
	// Keepalive reads the stream keepalive interval from request headers.
	Keepalive func(http.Header) time.Duration
	// Done closes when the daemon shuts down: streams end, watchers close.
	Done   <-chan struct{}
	Logger *slog.Logger
	// WatcherIdle is how long a polling watcher lives without a
	// GetWatcherEvents; 0 → DefaultWatcherIdle.
	WatcherIdle time.Duration
}

// DefaultWatcherIdle: a polling watcher whose client has not polled for this
// long is taken to be abandoned, and removed, so that clients that go away
// without RemoveWatcher cannot use up the user's inotify instances.
const DefaultWatcherIdle = 10 * time.Minute

// Service implements filesystemconnect.FilesystemHandler and /files.
type Service struct {
	cfg Config

	mu       sync.Mutex
	watchers map[string]*pollWatcher
}

// New returns a service; its polling watchers close when cfg.Done closes.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.WatcherIdle <= 0 {
		cfg.WatcherIdle = DefaultWatcherIdle
	}
	s := &Service{cfg: cfg, watchers: map[string]*pollWatcher{}}
	if cfg.Done != nil {
		go func() {
			<-cfg.Done
			s.removeAllWatchers()
		}()
	}
	return s
}

// Handler returns the Connect route and handler of filesystem.Filesystem.
func (s *Service) Handler(opts ...connect.HandlerOption) (string, http.Handler) {
	return filesystemconnect.NewFilesystemHandler(s, opts...)
}

// identify picks the identity from envd's Basic "user:" header.
func (s *Service) identify(h http.Header) (Identity, error) {
	name, _, _ := (&http.Request{Header: h}).BasicAuth()
	return s.identifyName(name)
}

// identifyName resolves a user name. As in envd, a user that cannot be
// resolved is Unauthenticated (/files: 401); one the daemon may not act as
// stays PermissionDenied.
func (s *Service) identifyName(name string) (Identity, error) {
	id, err := s.cfg.Identify(name)
	if err == nil || connect.CodeOf(err) == connect.CodePermissionDenied {
		return id, err
	}
	msg := err.Error()
	var ce *connect.Error
	if errors.As(err, &ce) {
		msg = ce.Message()
	}
	return Identity{}, connect.NewError(connect.CodeUnauthenticated, errors.New(msg))
}

// target resolves the request's identity and one path.
func (s *Service) target(h http.Header, p string) (Identity, string, error) {
	id, err := s.identify(h)
	if err != nil {
		return Identity{}, "", err
	}
	abs, err := id.path(p)
	if err != nil {
		return Identity{}, "", connect.NewError(connect.CodeInvalidArgument, err)
	}
	return id, abs, nil
}

func (s *Service) Stat(_ context.Context, req *connect.Request[fspb.StatRequest]) (*connect.Response[fspb.StatResponse], error) {
	id, p, err := s.target(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	var e *fspb.EntryInfo
	err = id.do(func() (err error) {
		e, err = newNames().entryInfo(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.StatResponse{Entry: e}), nil
}

func (s *Service) MakeDir(_ context.Context, req *connect.Request[fspb.MakeDirRequest]) (*connect.Response[fspb.MakeDirResponse], error) {
	id, p, err := s.target(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	var e *fspb.EntryInfo
	err = id.do(func() error {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return errorf(connect.CodeAlreadyExists, "directory %s already exists", p)
		case err == nil:
			return errorf(connect.CodeInvalidArgument, "path %s exists and is not a directory", p)
		case !errors.Is(err, fs.ErrNotExist):
			return fsError(err, "make directory %s", p)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fsError(err, "make directory %s", p)
		}
		e, err = newNames().entryInfo(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.MakeDirResponse{Entry: e}), nil
}

func (s *Service) Move(_ context.Context, req *connect.Request[fspb.MoveRequest]) (*connect.Response[fspb.MoveResponse], error) {
	id, src, err := s.target(req.Header(), req.Msg.GetSource())
	if err != nil {
		return nil, err
	}
	dst, err := id.path(req.Msg.GetDestination())
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	var e *fspb.EntryInfo
	err = id.do(func() error {
		if _, err := os.Lstat(src); err != nil {
			return fsError(err, "move %s", src)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fsError(err, "make parent directories of %s", dst)
		}
		if err := os.Rename(src, dst); err != nil {
			return fsError(err, "move %s to %s", src, dst)
		}
		e, err = newNames().entryInfo(dst)
		return err
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.MoveResponse{Entry: e}), nil
}

// Remove deletes a file or a whole tree. As in envd, a path that does not
// exist is not an error.
func (s *Service) Remove(_ context.Context, req *connect.Request[fspb.RemoveRequest]) (*connect.Response[fspb.RemoveResponse], error) {
	id, p, err := s.target(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	err = id.do(func() error { return fsError(os.RemoveAll(p), "remove %s", p) })
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.RemoveResponse{}), nil
}

// ListDir lists a directory (a symlink to one is followed) down to depth
// levels; entries do not follow symlinks and their paths are under the
// requested path, not the resolved one. A subdirectory the user may not read
// is listed but not entered.
func (s *Service) ListDir(_ context.Context, req *connect.Request[fspb.ListDirRequest]) (*connect.Response[fspb.ListDirResponse], error) {
	depth := int(req.Msg.GetDepth())
	if depth == 0 {
		depth = 1
	}
	id, p, err := s.target(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	var entries []*fspb.EntryInfo
	err = id.do(func() (err error) {
		entries, err = listDir(p, depth)
		return err
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fspb.ListDirResponse{Entries: entries}), nil
}

func listDir(p string, depth int) ([]*fspb.EntryInfo, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fsError(err, "list %s", p)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fsError(err, "list %s", p)
	}
	if !fi.IsDir() {
		return nil, errorf(connect.CodeInvalidArgument, "path %s is not a directory", p)
	}
	n := newNames()
	var entries []*fspb.EntryInfo
	err = filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
		if path == real {
			return err // the directory itself: only its read error matters
		}
		if err != nil {
			if d != nil && d.IsDir() {
				return filepath.SkipDir // unreadable subdirectory: listed, not entered
			}
			return nil
		}
		rel := path[len(real)+1:]
		level := strings.Count(rel, string(filepath.Separator)) + 1
		info, err := d.Info()
		if err != nil {
			return nil // gone since the directory was read
		}
		entries = append(entries, n.fromInfo(filepath.Join(p, rel), info))
		if d.IsDir() && level == depth {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fsError(err, "list %s", p)
	}
	return entries, nil
}
