package shimclient

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// KeyFile, in the runtime root, holds the secret a shim asks of a
// daemon that reconnects to it. It belongs to the runtime root, so every
// daemon that serves the root in turn (one at a time: see LockFile) adopts
// the shims of the one before, and no other process that finds a shim's
// socket takes its group by connecting.
const KeyFile = "shim.key"

const shimKeyLen = 32 // bytes, hex in the file

// LoadKey reads the runtime root's key, creating it on first use. Should
// neither work, this daemon uses a key of its own: its groups then stay
// with it, and a later daemon cannot adopt them.
func LoadKey(root string, log Warner) string {
	path := filepath.Join(root, KeyFile)
	for range 2 {
		if key, err := readShimKey(path); err == nil {
			return key
		} else if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("shim key unreadable; a fresh one is used", "path", path, "err", err)
			break
		}
		key := newShimKey()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another daemon made it meanwhile: read that one
		}
		if err == nil {
			_, err = f.WriteString(key + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			log.Warn("shim key not kept; the next daemon cannot adopt this one's groups", "path", path, "err", err)
		}
		return key
	}
	return newShimKey()
}

func readShimKey(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b := make([]byte, 2*shimKeyLen+2)
	n, _ := f.Read(b)
	key := string(b[:n])
	if len(key) > 0 && key[len(key)-1] == '\n' {
		key = key[:len(key)-1]
	}
	if raw, err := hex.DecodeString(key); err != nil || len(raw) != shimKeyLen {
		return "", errors.New("not a key")
	}
	return key, nil
}

func newShimKey() string {
	b := make([]byte, shimKeyLen)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
