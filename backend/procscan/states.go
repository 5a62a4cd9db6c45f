package procscan

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"syscall"

	"sandtop/wrapper"
)

// The states scan reads ROOT/processes two levels deep and prints, each
// NUL-terminated:
//
//	four fields per entry: its type (as find's %y), its path relative to
//	processes/ ("id" or "id/name"), its size and its mtime in seconds
//	(find's %T@); then "--files--";
//	for each small published file of a state directory (up to 1 KiB) and
//	each argv (up to 64 KiB), "./id/name:" and one of its NUL-separated
//	parts, for each part (what grep -z -aH prints).
//
// Links are never followed, neither into a directory nor to a file.

// smallFiles are the published files whose content the scan prints when
// they hold up to smallLimit bytes; argv is printed up to argvLimit.
var smallFiles = map[string]bool{wrapper.PidFile: true, wrapper.ExitCodeFile: true, wrapper.SignalFile: true,
	wrapper.TagFile: true, wrapper.ProblemFile: true, wrapper.SupervisorFile: true}

const (
	smallLimit = 1 << 10
	argvLimit  = 64 << 10
)

// WriteStates prints the states scan of the runtime root root. A root
// without processes/ prints only the separator.
func WriteStates(w io.Writer, root string) error {
	out := bufio.NewWriterSize(w, 64<<10)
	dir := path.Join(root, wrapper.ProcessesDir)
	ids, err := os.ReadDir(dir)
	if err != nil {
		if _, err := io.WriteString(out, "--files--\x00"); err != nil {
			return err
		}
		return out.Flush()
	}
	var files []string
	for _, id := range ids {
		st, err := os.Lstat(path.Join(dir, id.Name()))
		if err != nil {
			continue // gone meanwhile, as find skips it
		}
		writeEntry(out, id.Name(), st)
		if !st.IsDir() {
			continue
		}
		ents, err := os.ReadDir(path.Join(dir, id.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			rel := id.Name() + "/" + e.Name()
			st, err := os.Lstat(path.Join(dir, rel))
			if err != nil {
				continue
			}
			writeEntry(out, rel, st)
			if !st.Mode().IsRegular() {
				continue
			}
			if (smallFiles[e.Name()] && st.Size() <= smallLimit) || (e.Name() == wrapper.ArgvFile && st.Size() <= argvLimit) {
				files = append(files, rel)
			}
		}
	}
	out.WriteString("--files--\x00")
	buf := make([]byte, 4096)
	for _, rel := range files {
		b, ok := readCapped(&buf, path.Join(dir, rel), argvLimit)
		if !ok || len(b) == 0 {
			continue
		}
		for len(b) > 0 {
			part := b
			i := indexNUL(b)
			if i >= 0 {
				part, b = b[:i], b[i+1:]
			} else {
				b = nil
			}
			out.WriteString("./" + rel + ":")
			out.Write(part)
			out.WriteByte(0)
		}
	}
	return out.Flush()
}

func writeEntry(out *bufio.Writer, rel string, st fs.FileInfo) {
	t := st.ModTime()
	out.WriteString(fileType(st.Mode()) + "\x00" + rel + "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00")
	// find's %T@: seconds, a point and ten digits (nanoseconds and a 0).
	ns := strconv.FormatInt(int64(t.Nanosecond()), 10)
	out.WriteString(strconv.FormatInt(t.Unix(), 10) + "." + "000000000"[len(ns):] + ns + "0\x00")
}

// fileType is find's %y letter.
func fileType(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "f"
	case fs.ModeDir:
		return "d"
	case fs.ModeSymlink:
		return "l"
	case fs.ModeNamedPipe:
		return "p"
	case fs.ModeSocket:
		return "s"
	case fs.ModeDevice:
		return "b"
	case fs.ModeDevice | fs.ModeCharDevice:
		return "c"
	}
	return "U"
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// readCapped reads up to limit bytes of a file into *buf, never through a
// link nor waiting on a pipe that took its place.
func readCapped(buf *[]byte, name string, limit int) ([]byte, bool) {
	return readFlags(buf, name, limit, syscall.O_NOFOLLOW|syscall.O_NONBLOCK)
}
