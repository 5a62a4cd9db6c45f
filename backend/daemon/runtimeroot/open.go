// Package runtimeroot opens what the Supervisor extension reads of the
// runtime root (ReadFile, ListDir, ReadStates) and nothing beyond it, even
// through a symlink that is swapped while it resolves. Its errors are
// Connect errors, ready for an RPC's answer.
package runtimeroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sandtop/safetext"
	"strings"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
)

// MaxReadChunk caps one ReadRange (one Supervisor/ReadFile answer).
const MaxReadChunk = 1 << 20

// Root is a runtime root: Path with its symlinks resolved, and Configured
// as given, which a client may use as well.
type Root struct {
	Path       string
	Configured string
}

// Open opens a path that must lie inside the root (relative paths are
// relative to it), following symlinks only while they stay inside it, and
// returns it with its resolved path. The check is done twice: once on the
// resolved path, for a precise message, and again by the kernel (openat2
// with RESOLVE_BENEATH), so a symlink swapped in between cannot lead
// outside.
func (r Root) Open(p string) (*os.File, string, error) {
	root := r.Path
	if p == "" {
		p = "."
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	abs = filepath.Clean(abs)
	// Accept the root as configured too, when it differs from the real path.
	if cfgRoot, err := filepath.Abs(r.Configured); err == nil && cfgRoot != root {
		if rest, ok := cutPathPrefix(abs, cfgRoot); ok {
			abs = filepath.Join(root, rest)
		}
	}
	if _, ok := cutPathPrefix(abs, root); !ok {
		return nil, "", connect.NewError(connect.CodePermissionDenied,
			fmt.Errorf("path %q is outside the runtime root %s", clip(p), root))
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", connect.NewError(connect.CodeNotFound, fmt.Errorf("path %q does not exist", clip(p)))
	}
	if err != nil {
		return nil, "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("path %q: %w", clip(p), bare(err)))
	}
	rel, ok := cutPathPrefix(real, root)
	if !ok {
		return nil, "", connect.NewError(connect.CodePermissionDenied,
			fmt.Errorf("path %q resolves to %s, outside the runtime root %s", clip(p), real, root))
	}
	f, err := OpenBeneath(root, rel)
	if err != nil {
		if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
			return nil, "", connect.NewError(connect.CodePermissionDenied,
				fmt.Errorf("path %q escapes the runtime root %s", clip(p), root))
		}
		return nil, "", connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("open %q: %w", clip(p), err))
	}
	return f, real, nil
}

// cutPathPrefix returns p relative to root when p is root or below it.
func cutPathPrefix(p, root string) (string, bool) {
	if p == root {
		return ".", true
	}
	rest, ok := strings.CutPrefix(p, root+string(filepath.Separator))
	if !ok || root == "" {
		return "", false
	}
	return rest, true
}

// OpenBeneath opens rel (a path relative to root) for reading, refusing
// with the kernel's EXDEV or ELOOP anything that would resolve outside
// root or through a /proc magic link; it never waits on a FIFO.
func OpenBeneath(root, rel string) (*os.File, error) {
	dirfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
		// O_NONBLOCK: opening a FIFO a program planted must not wait for
		// a writer (and pin an OS thread while it does).
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) { // kernel before 5.6: the EvalSymlinks check stands alone
		return os.OpenFile(filepath.Join(root, rel), os.O_RDONLY|unix.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
}

// ReadRange reads up to length bytes (0 → MaxReadChunk) of f at offset;
// p is the path the client named, for messages.
func ReadRange(f *os.File, p string, offset, length uint64) (data []byte, size uint64, eof bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, false, connect.NewError(connect.CodeInternal, fmt.Errorf("stat %q: %w", clip(p), err))
	}
	if fi.IsDir() {
		return nil, 0, false, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("path %q is a directory; use ListDir", clip(p)))
	}
	if !fi.Mode().IsRegular() {
		// A FIFO, socket or device could block or never end.
		return nil, 0, false, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("path %q is not a regular file (%s)", clip(p), fi.Mode().Type()))
	}
	size = uint64(fi.Size())
	if length == 0 || length > MaxReadChunk {
		length = MaxReadChunk
	}
	if offset >= size {
		return nil, size, true, nil
	}
	buf := make([]byte, min(length, size-offset))
	n, err := f.ReadAt(buf, int64(offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, false, connect.NewError(connect.CodeInternal, fmt.Errorf("read %q: %w", clip(p), err))
	}
	return buf[:n], size, offset+uint64(n) >= size, nil
}

// clip shortens a client's path for an error message.
func clip(s string) string { return safetext.Quoted(s) }

// bare drops the path an *fs.PathError carries: the message quotes it
// clipped.
func bare(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
