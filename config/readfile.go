package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxFileSize bounds what sandtop reads of a config or token file: both are
// a few lines, and anything bigger is a mistake (or /dev/zero).
const MaxFileSize = 1 << 20

// ReadSmallFile reads a regular file of at most MaxFileSize bytes whole.
// The open does not block, so a FIFO where the file belongs cannot hang
// the command (a blocked open ignores Ctrl-C); anything but a regular file
// is refused before a byte is read. A missing file is an error matching
// fs.ErrNotExist. Errors name the path.
func ReadSmallFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, fileKind(fi.Mode()))
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a sandtop file may hold", path, fi.Size(), MaxFileSize)
	}
	// The file may grow after the stat: read one byte past the bound to see.
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s holds more than the %d bytes a sandtop file may hold", path, MaxFileSize)
	}
	return b, nil
}

// fileKind names a non-regular file's type for an error.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
