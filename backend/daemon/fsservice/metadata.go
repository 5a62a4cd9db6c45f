package fsservice

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
)

// Upload metadata, as envd takes it: every X-Metadata-<key> header of a
// POST /files becomes the extended attribute user.e2b.<key> (key in lower
// case) of each file the upload writes, replacing the file's whole set: keys
// the upload does not name are removed. Keys and values are printable ASCII;
// a name may not pass the kernel's 255 bytes; the whole set (names with
// their prefix, plus values) is at most 4 KiB, what ext4 keeps in one block.
const (
	metadataHeaderPrefix = "X-Metadata-"
	maxMetadataKey       = 255 - len(metadataPrefix)
	maxMetadataTotal     = 4096
)

// uploadMetadata reads and checks a request's X-Metadata-* headers (nil if
// there are none). The first value of a repeated header counts, as in envd.
func uploadMetadata(h http.Header) (map[string]string, error) {
	var md map[string]string
	total := 0
	for name, values := range h {
		rest, ok := cutPrefixFold(name, metadataHeaderPrefix)
		if !ok || len(values) == 0 {
			continue
		}
		key := strings.ToLower(rest)
		if key == "" {
			continue
		}
		if len(key) > maxMetadataKey {
			return nil, fmt.Errorf("metadata key %q is %d bytes, more than %d", clip(key), len(key), maxMetadataKey)
		}
		if err := printableASCII("key "+clip(key), key); err != nil {
			return nil, err
		}
		if err := printableASCII(fmt.Sprintf("value of key %q", clip(key)), values[0]); err != nil {
			return nil, err
		}
		if md == nil {
			md = map[string]string{}
		}
		md[key] = values[0]
		total += len(metadataPrefix) + len(key) + len(values[0])
	}
	if total > maxMetadataTotal {
		return nil, fmt.Errorf("metadata takes %d bytes, more than %d (names with their %q prefix, plus values)", total, maxMetadataTotal, metadataPrefix)
	}
	return md, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}

func printableASCII(what, s string) error {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("metadata %s has byte 0x%02x at offset %d: only printable ASCII is allowed", what, c, i)
		}
	}
	return nil
}

// writeMetadata makes md the file's whole user.e2b.* set, through its open
// descriptor (so a rename meanwhile cannot redirect it). A filesystem
// without extended attributes (/proc, some tmpfs) keeps the file without
// them, as envd does.
func writeMetadata(f *os.File, md map[string]string) error {
	fd := int(f.Fd())
	old, err := flistMetadata(fd)
	if errors.Is(err, unix.ENOTSUP) {
		return nil
	}
	if err != nil {
		return metadataError(err)
	}
	for _, key := range old {
		if _, keep := md[key]; keep {
			continue
		}
		if err := unix.Fremovexattr(fd, metadataPrefix+key); err != nil && !errors.Is(err, unix.ENODATA) {
			return metadataError(err)
		}
	}
	for k, v := range md {
		if err := unix.Fsetxattr(fd, metadataPrefix+k, []byte(v), 0); err != nil {
			if errors.Is(err, unix.ENOTSUP) {
				return nil
			}
			return metadataError(err)
		}
	}
	return nil
}

func metadataError(err error) error {
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, unix.E2BIG) {
		return errorf(connect.CodeResourceExhausted, "not enough space for the file's metadata: %v", err)
	}
	return errorf(connect.CodeInternal, "write the file's metadata: %v", err)
}

// flistMetadata lists the user.e2b.* keys (prefix removed) of an open file.
func flistMetadata(fd int) ([]string, error) {
	for {
		sz, err := unix.Flistxattr(fd, nil)
		if err != nil || sz == 0 {
			return nil, err
		}
		buf := make([]byte, sz)
		n, err := unix.Flistxattr(fd, buf)
		if errors.Is(err, unix.ERANGE) {
			continue // grew meanwhile
		}
		if err != nil {
			return nil, err
		}
		var keys []string
		for _, name := range bytes.Split(buf[:n], []byte{0}) {
			if key, ok := strings.CutPrefix(string(name), metadataPrefix); ok && key != "" {
				keys = append(keys, key)
			}
		}
		return keys, nil
	}
}

// fileMetadata reads an open file's user.e2b.* set back, for the upload's
// answer (nil when it has none).
func fileMetadata(f *os.File) map[string]string {
	fd := int(f.Fd())
	keys, err := flistMetadata(fd)
	if err != nil {
		return nil
	}
	var md map[string]string
	for _, key := range keys {
		val := make([]byte, maxMetadataTotal)
		n, err := unix.Fgetxattr(fd, metadataPrefix+key, val)
		if err != nil || !utf8.ValidString(key) || !utf8.Valid(val[:n]) {
			continue
		}
		if md == nil {
			md = map[string]string{}
		}
		md[key] = string(val[:n])
	}
	return md
}
