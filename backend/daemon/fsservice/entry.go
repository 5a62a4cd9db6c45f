package fsservice

import (
	"bytes"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/types/known/timestamppb"

	fspb "sandtop/backend/gen/filesystem"
)

// metadataPrefix is the xattr namespace envd shows as EntryInfo.metadata.
const metadataPrefix = "user.e2b."

// names caches uid and gid lookups for one answer: a listing of thousands
// of entries would otherwise read the user database once per entry.
type names struct {
	users, groups map[uint32]string
}

func newNames() *names {
	return &names{users: map[uint32]string{}, groups: map[uint32]string{}}
}

func (n *names) user(uid uint32) string {
	if s, ok := n.users[uid]; ok {
		return s
	}
	s := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(s); err == nil {
		s = u.Username
	}
	n.users[uid] = s
	return s
}

func (n *names) group(gid uint32) string {
	if s, ok := n.groups[gid]; ok {
		return s
	}
	s := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(s); err == nil {
		s = g.Name
	}
	n.groups[gid] = s
	return s
}

// entryInfo describes path itself (a symlink is not followed, but its type,
// mode and target come from what it resolves to), with envd's field
// meanings. It must run under the requesting identity.
func (n *names) entryInfo(path string) (*fspb.EntryInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fsError(err, "stat %s", path)
	}
	return n.fromInfo(path, fi), nil
}

func (n *names) fromInfo(path string, fi os.FileInfo) *fspb.EntryInfo {
	e := &fspb.EntryInfo{
		Name:        fi.Name(),
		Path:        path,
		Size:        fi.Size(),
		Permissions: fi.Mode().String(),
		Type:        fileType(fi.Mode()),
		Mode:        uint32(fi.Mode().Perm()),
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			target = path // dangling or unreadable: envd names the link itself
		}
		e.SymlinkTarget = &target
		e.Type, e.Mode = fspb.FileType_FILE_TYPE_UNSPECIFIED, 0
		if ti, err := os.Stat(path); err == nil {
			e.Type, e.Mode = fileType(ti.Mode()), uint32(ti.Mode().Perm())
		}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.Owner, e.Group = n.user(st.Uid), n.group(st.Gid)
		if st.Mtim.Sec != 0 || st.Mtim.Nsec != 0 {
			e.ModifiedTime = timestamppb.New(time.Unix(st.Mtim.Sec, st.Mtim.Nsec))
		}
	}
	e.Metadata = readMetadata(path)
	return e
}

func fileType(m os.FileMode) fspb.FileType {
	switch {
	case m.IsRegular():
		return fspb.FileType_FILE_TYPE_FILE
	case m.IsDir():
		return fspb.FileType_FILE_TYPE_DIRECTORY
	case m&os.ModeSymlink != 0:
		return fspb.FileType_FILE_TYPE_SYMLINK
	}
	return fspb.FileType_FILE_TYPE_UNSPECIFIED
}

// readMetadata returns the user.e2b.* extended attributes (prefix removed),
// best effort: no xattr support or no attributes is simply no metadata.
func readMetadata(path string) map[string]string {
	sz, err := unix.Listxattr(path, nil)
	if err != nil || sz <= 0 {
		return nil
	}
	buf := make([]byte, sz)
	sz, err = unix.Listxattr(path, buf)
	if err != nil {
		return nil
	}
	var md map[string]string
	for _, name := range bytes.Split(buf[:sz], []byte{0}) {
		key, ok := strings.CutPrefix(string(name), metadataPrefix)
		if !ok || key == "" {
			continue
		}
		val := make([]byte, 4096)
		n, err := unix.Getxattr(path, string(name), val)
		if err != nil || !utf8.ValidString(key) || !utf8.Valid(val[:n]) {
			continue // proto strings must be UTF-8
		}
		if md == nil {
			md = map[string]string{}
		}
		md[key] = string(val[:n])
	}
	return md
}
