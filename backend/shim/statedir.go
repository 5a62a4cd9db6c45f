package shim

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// StateDir is an open state directory. Every file in it is opened relative
// to the directory's descriptor with O_NOFOLLOW, so a link that a program
// planted in place of a file (or of the directory itself, after it was
// opened) is never followed: a write replaces the link, not its target.
type StateDir struct {
	fd   int
	path string // for messages only
}

// OpenStateDir opens path, which must be a directory and not a symlink.
func OpenStateDir(path string) (*StateDir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &StateDir{fd: fd, path: path}, nil
}

// Path is the directory's path as opened.
func (d *StateDir) Path() string { return d.path }

// Close releases the directory descriptor.
func (d *StateDir) Close() error { return unix.Close(d.fd) }

// WriteFile replaces name with data atomically: a new temporary file
// (O_CREAT|O_EXCL|O_NOFOLLOW, so it never reuses what a program put there),
// fsync-free write, then renameat over name. Readers see the old content or
// the new, never a part.
func (d *StateDir) WriteFile(name string, data []byte) error {
	tmp := "." + name + ".tmp" + strconv.Itoa(os.Getpid())
	fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EEXIST) {
		// A leftover of an earlier attempt (or a planted entry): unlinkat
		// removes the entry itself, a link is not followed.
		_ = unix.Unlinkat(d.fd, tmp, 0)
		fd, err = unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	}
	if err != nil {
		return d.pathError("create", name, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return d.pathError("write", name, unwrapPathErr(werr))
	}
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return d.pathError("rename", name, err)
	}
	return nil
}

// CreateFile writes data into name, which must not exist yet (nor be a
// link): for the files a shim writes once into its fresh directory before
// the start event. It saves WriteFile's rename, a journalled metadata
// update that on a slow disk costs as much as the create. A reader can see
// the file empty for a moment, as it sees the wrapper's pid file before
// the wrapper fills it, but never another file's content.
func (d *StateDir) CreateFile(name string, data []byte) error {
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return d.pathError("create", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = unix.Unlinkat(d.fd, name, 0)
		return d.pathError("write", name, unwrapPathErr(werr))
	}
	return nil
}

// CreateReserved makes a new, empty file (never a link) with room for
// size bytes already allocated, so that writing them later needs no new
// space; where the filesystem cannot reserve, the file is simply empty.
func (d *StateDir) CreateReserved(name string, size int64) (*os.File, error) {
	f, err := d.Create(name)
	if err != nil {
		return nil, err
	}
	err = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, size)
	if err != nil && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		_ = f.Close()
		_ = unix.Unlinkat(d.fd, name, 0)
		return nil, d.pathError("reserve", name, err)
	}
	return f, nil
}

// WriteLine is WriteFile of one line.
func (d *StateDir) WriteLine(name, line string) error {
	return d.WriteFile(name, []byte(line+"\n"))
}

// Create makes a new, empty file for appending (a spill): it must not
// exist, and is never a link.
func (d *StateDir) Create(name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, d.pathError("create", name, err)
	}
	return os.NewFile(uintptr(fd), d.path+"/"+name), nil
}

// Open opens name for reading, never through a link.
func (d *StateDir) Open(name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, d.pathError("open", name, err)
	}
	return os.NewFile(uintptr(fd), d.path+"/"+name), nil
}

// Remove unlinks name (a link is removed, not its target); a missing file
// is fine.
func (d *StateDir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return d.pathError("remove", name, err)
	}
	return nil
}

// Rename renames old to new inside the directory.
func (d *StateDir) Rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil && !errors.Is(err, unix.ENOENT) {
		return d.pathError("rename", old, err)
	}
	return nil
}

// ProcPath names an entry through /proc/self/fd, a path short enough for a
// unix socket address however deep the directory is.
func (d *StateDir) ProcPath(name string) string {
	return "/proc/self/fd/" + strconv.Itoa(d.fd) + "/" + name
}

func (d *StateDir) pathError(op, name string, err error) error {
	return &os.PathError{Op: op, Path: d.path + "/" + name, Err: err}
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// describe renders a failure as "PATH: reason" for one-line errors.
func describe(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %s %v", pe.Path, pe.Op, pe.Err)
	}
	return err.Error()
}
