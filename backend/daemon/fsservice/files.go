package fsservice

import (
	"bufio"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
)

// copyBufSize is the fixed buffer one upload copies through; with the
// multipart reader's own small buffer, an upload of any size holds about
// this much of it in memory.
const copyBufSize = 256 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// uploaded is one file in envd's POST /files answer.
type uploaded struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
	// Metadata is the file's user.e2b.* set as written (see metadata.go).
	Metadata map[string]string `json:"metadata,omitempty"`
}

// FilesHandler serves envd's GET /files (download) and POST /files
// (upload). The query's username picks the user; path is resolved as for
// the RPCs. envd's signature parameters are ignored: the daemon's token
// check, in front of this handler, is the only authentication.
func (s *Service) FilesHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			s.download(w, r)
		case http.MethodPost:
			s.upload(w, r)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			jsonError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed on /files", clip(r.Method)))
		}
	})
}

func jsonError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{status, err.Error()})
}

// fail answers an error from a file operation with its /files status.
func fail(w http.ResponseWriter, err error) {
	var ce *connect.Error
	msg := err
	if errors.As(err, &ce) {
		msg = errors.New(ce.Message())
	}
	jsonError(w, httpStatus(err), msg)
}

// filesIdentity resolves the query's user.
func (s *Service) filesIdentity(r *http.Request) (Identity, error) {
	return s.identifyName(r.URL.Query().Get("username"))
}

func (s *Service) filesTarget(r *http.Request) (Identity, string, error) {
	id, err := s.filesIdentity(r)
	if err != nil {
		return Identity{}, "", err
	}
	p, err := id.path(r.URL.Query().Get("path"))
	if err != nil {
		return Identity{}, "", connect.NewError(connect.CodeInvalidArgument, err)
	}
	return id, p, nil
}

func (s *Service) download(w http.ResponseWriter, r *http.Request) {
	id, p, err := s.filesTarget(r)
	if err != nil {
		fail(w, err)
		return
	}
	var f *os.File
	err = id.do(func() error {
		// O_NONBLOCK: opening a FIFO must not hang the request.
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if errors.Is(err, unix.ENOENT) {
			return errorf(connect.CodeNotFound, "path '%s' does not exist", p)
		}
		if err != nil {
			return fsError(err, "download %s", p)
		}
		f = os.NewFile(uintptr(fd), p)
		return nil
	})
	if err != nil {
		fail(w, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		fail(w, fsError(err, "download %s", p))
		return
	}
	if fi.IsDir() {
		fail(w, errorf(connect.CodeInvalidArgument, "path '%s' is a directory", p))
		return
	}
	if !fi.Mode().IsRegular() {
		fail(w, errorf(connect.CodeInvalidArgument, "path '%s' is not a regular file", p))
		return
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": filepath.Base(p)}))
	w.Header().Set("Vary", "Accept-Encoding")
	if wantsGzip(r) {
		ct := mime.TypeByExtension(filepath.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Encoding", "gzip")
		// Buffer gzip's output: unbuffered, it reaches the client as many
		// tiny chunks, which some clients (undici) decompress very slowly.
		out := bufio.NewWriterSize(w, 64<<10)
		gz, _ := gzip.NewWriterLevel(out, gzip.BestSpeed)
		bp := copyBufs.Get().(*[]byte)
		_, _ = io.CopyBuffer(gz, f, *bp)
		copyBufs.Put(bp)
		if gz.Close() == nil {
			_ = out.Flush()
		}
		return
	}
	// ServeContent handles Range and conditional requests and copies with
	// sendfile where it can.
	http.ServeContent(w, r, filepath.Base(p), fi.ModTime(), f)
}

// wantsGzip is true when Accept-Encoding names gzip with a non-zero quality
// and the request has no Range or condition (those get the plain bytes, so
// ServeContent can answer them).
func wantsGzip(r *http.Request) bool {
	for _, h := range []string{"Range", "If-Range", "If-Modified-Since", "If-None-Match"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}

func (s *Service) upload(w http.ResponseWriter, r *http.Request) {
	id, err := s.filesIdentity(r)
	if err != nil {
		fail(w, err)
		return
	}
	md, err := uploadMetadata(r.Header)
	if err != nil {
		jsonError(w, http.StatusBadRequest, fmt.Errorf("invalid metadata: %w", err))
		return
	}
	body := io.Reader(r.Body)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			jsonError(w, http.StatusBadRequest, fmt.Errorf("gzip body: %w", err))
			return
		}
		defer gz.Close()
		body = gz
	default:
		jsonError(w, http.StatusBadRequest, fmt.Errorf("unsupported Content-Encoding %q: only gzip", clip(enc)))
		return
	}
	query, hasPath := r.URL.Query(), r.URL.Query().Has("path")
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var done []uploaded
	switch {
	case mediaType == "application/octet-stream":
		if !hasPath {
			jsonError(w, http.StatusBadRequest, errors.New("a raw (application/octet-stream) upload needs the path query parameter"))
			return
		}
		p, err := id.path(query.Get("path"))
		var written map[string]string
		if err == nil {
			written, err = writeFile(id, p, body, md)
		}
		if err != nil {
			fail(w, connectOr(err, connect.CodeInvalidArgument))
			return
		}
		done = append(done, uploaded{Path: p, Name: filepath.Base(p), Type: "file", Metadata: written})
	case strings.HasPrefix(mediaType, "multipart/"):
		mr, err := multipartReader(body, params["boundary"])
		if err != nil {
			jsonError(w, http.StatusBadRequest, err)
			return
		}
		seen := map[string]bool{}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				jsonError(w, http.StatusBadRequest, fmt.Errorf("read multipart body: %w", bare(err)))
				return
			}
			if part.FormName() != "file" {
				part.Close()
				continue
			}
			target := query.Get("path")
			if !hasPath {
				// The part's own filename, whole: it carries the path.
				_, dp, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
				var ok bool
				if target, ok = dp["filename"]; !ok {
					part.Close()
					jsonError(w, http.StatusBadRequest, errors.New("multipart part has no filename and the request no path"))
					return
				}
			}
			p, err := id.path(target)
			if err != nil {
				part.Close()
				jsonError(w, http.StatusBadRequest, err)
				return
			}
			if seen[p] {
				part.Close()
				jsonError(w, http.StatusBadRequest, fmt.Errorf("cannot upload several files to the same path '%s' in one request; the first one was written", clip(p)))
				return
			}
			seen[p] = true
			written, err := writeFile(id, p, part, md)
			part.Close()
			if err != nil {
				fail(w, err)
				return
			}
			done = append(done, uploaded{Path: p, Name: filepath.Base(p), Type: "file", Metadata: written})
		}
	default:
		jsonError(w, http.StatusBadRequest, fmt.Errorf("unsupported content type %q: want multipart/form-data or application/octet-stream", clip(r.Header.Get("Content-Type"))))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if done == nil {
		done = []uploaded{}
	}
	_ = json.NewEncoder(w).Encode(done)
}

func connectOr(err error, code connect.Code) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	return connect.NewError(code, err)
}

// writeFile writes src to p as the identity and makes md its metadata (see
// metadata.go), returning the metadata as written. It makes p's missing
// parent directories as the user; where the user may not, a root daemon
// makes them itself and hands them to the user, as envd does. A new file is created and written in place, as
// envd does (a watcher sees "create" then "write"). A file that exists is
// replaced: a temporary file beside it is renamed over it once complete, so
// a reader, a concurrent upload or a client that goes away never leaves it
// torn: it holds one whole upload or its old content. A file that exists keeps its
// permission bits, and its owner where the daemon may set it (as root);
// the user must be able to write it, as when it was rewritten in place.
// A symlink is followed: its target is replaced, not the link. Only a
// regular file is written: a FIFO, a device or a socket is refused, and
// nothing is opened in a way that could wait.
func writeFile(id Identity, p string, src io.Reader, md map[string]string) (map[string]string, error) {
	if err := makeParents(id, filepath.Dir(p)); err != nil {
		return nil, fsError(err, "make parent directories of %s", p)
	}
	var t *upload
	err := id.do(func() error {
		var err error
		t, err = prepareUpload(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// io.CopyBuffer with a plain writer: the buffer is ours and fixed.
	_, err = io.CopyBuffer(struct{ io.Writer }{t.f}, src, *bp)
	if err == nil && t.temp != "" && id.Cred != nil && t.existed {
		// As root, outside the identity: give the new file the old one's
		// owner. The user could write the old file, so it may hold their
		// bytes under that owner, as an in-place write would.
		err = t.f.Chown(int(t.uid), int(t.gid))
		if err == nil {
			err = t.f.Chmod(t.perm) // chown clears set-id bits
		}
	}
	var written map[string]string
	if err == nil {
		// Always, even with no metadata: an overwrite in place keeps the
		// old file's attributes, which the new set replaces.
		if err = writeMetadata(t.f, md); err == nil {
			written = fileMetadata(t.f)
		}
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if t.temp == "" { // written in place
		if err != nil {
			return nil, fsError(err, "write %s", p)
		}
		return written, nil
	}
	if err == nil {
		err = id.do(func() error { return os.Rename(t.temp, t.target) })
	}
	if err != nil {
		_ = id.do(func() error { return os.Remove(t.temp) })
		return nil, fsError(err, "write %s", p)
	}
	_ = id.do(func() error { notifyWritten(t.target); return nil })
	return written, nil
}

// notifyWritten makes inotify report a write of p, which now holds a whole
// new upload: watchers of the directory saw a temporary file renamed over
// it, while envd, writing in place, shows them a write of p, which clients
// wait for. Truncating the file to its own size changes nothing in it but
// is reported as a modification. Best effort: it is only a notice.
func notifyWritten(p string) {
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		_ = unix.Ftruncate(fd, st.Size)
	}
}

// makeParents makes dir and its missing parents as the identity. Where the
// user may not, a root daemon makes the missing ones itself, mode 0755, and
// gives each to the user, as envd does for every upload (so an upload to
// /new/dir/file works for a user who could not create /new). The file
// itself is still written with the user's rights.
func makeParents(id Identity, dir string) error {
	err := id.do(func() error { return os.MkdirAll(dir, 0o755) })
	if err == nil || id.Cred == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return &fs.PathError{Op: "mkdir", Path: d, Err: unix.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		made = append(made, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(made) - 1; i >= 0; i-- {
		d := made[i]
		err := os.Mkdir(d, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue // made meanwhile by someone else: not ours to give away
		}
		if err != nil {
			return err
		}
		if err := os.Lchown(d, int(id.Cred.Uid), int(id.Cred.Gid)); err != nil {
			return err
		}
	}
	return nil
}

// upload is a file being written for writeFile.
type upload struct {
	f       *os.File
	target  string // what is replaced: p, or where its symlink leads
	temp    string // the temporary file, or "" when writing target in place
	existed bool
	perm    os.FileMode
	uid     uint32
	gid     uint32
}

// prepareUpload opens what writeFile writes into. Run as the identity.
func prepareUpload(p string) (*upload, error) { return openUpload(p, false) }

// prepareUploadAgain is prepareUpload once more, after another upload
// created the file between a look and a create (a dangling symlink, which
// O_EXCL refuses, is not retried for ever).
func prepareUploadAgain(p string) (*upload, error) { return openUpload(p, true) }

func openUpload(p string, racedOnce bool) (*upload, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fsError(err, "make parent directories of %s", p)
	}
	u := &upload{target: p, perm: 0o666}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		u.target = real
	}
	fi, err := os.Stat(u.target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A new file is created and written in place, as envd does, so a
		// watcher sees it created and then written. O_EXCL: of concurrent
		// uploads, one creates it and the others replace it whole.
		fd, err := unix.Open(u.target, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, uint32(u.perm))
		if errors.Is(err, unix.EEXIST) && !racedOnce {
			return prepareUploadAgain(p)
		}
		if err != nil {
			return nil, fsError(&fs.PathError{Op: "create", Path: p, Err: err}, "create %s", p)
		}
		u.f = os.NewFile(uintptr(fd), u.target)
		return u, nil
	case err != nil:
		return nil, fsError(err, "upload to %s", p)
	case fi.IsDir():
		return nil, errorf(connect.CodeInvalidArgument, "path is a directory: %s", p)
	case !fi.Mode().IsRegular():
		return nil, errorf(connect.CodeInvalidArgument, "path '%s' is %s, not a regular file: uploads write regular files only", p, fileKind(fi.Mode()))
	default:
		u.existed = true
		u.perm = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			u.uid, u.gid = st.Uid, st.Gid
		}
		// The user must be able to write the file itself. O_NONBLOCK: if
		// a FIFO took its place meanwhile, the open must not wait.
		fd, err := unix.Open(u.target, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != nil {
			return nil, fsError(err, "upload to %s", p)
		}
		u.f = os.NewFile(uintptr(fd), u.target)
	}
	temp, f, err := createTemp(filepath.Dir(u.target), u.perm)
	if err == nil {
		if u.existed {
			_ = u.f.Close()
			// The mode was created under the umask; the old file's is kept.
			if err = f.Chmod(u.perm); err != nil {
				f.Close()
				os.Remove(temp)
				return nil, fsError(err, "upload to %s", p)
			}
		}
		u.f, u.temp = f, temp
		return u, nil
	}
	if !u.existed {
		return nil, fsError(err, "create %s", p)
	}
	// A directory the user may not write, holding a file they may: write
	// it in place, as before, once it is known to be a regular file.
	if fi, serr := u.f.Stat(); serr != nil || !fi.Mode().IsRegular() {
		u.f.Close()
		return nil, errorf(connect.CodeInvalidArgument, "path '%s' is not a regular file: uploads write regular files only", p)
	}
	if err := u.f.Truncate(0); err != nil {
		u.f.Close()
		return nil, fsError(err, "truncate %s", p)
	}
	return u, nil
}

// createTemp makes a new file, mode perm less the umask, in dir.
func createTemp(dir string, perm os.FileMode) (string, *os.File, error) {
	var rnd [8]byte
	for range 10 {
		_, _ = rand.Read(rnd[:])
		name := filepath.Join(dir, ".sandtop-upload-"+hex.EncodeToString(rnd[:]))
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(perm))
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, &fs.PathError{Op: "create", Path: name, Err: err}
		}
		return name, os.NewFile(uintptr(fd), name), nil
	}
	return "", nil, fmt.Errorf("create a temporary file in %s: every name tried exists", dir)
}

// fileKind names a non-regular file's type for a message.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// multipartReader streams the parts of a multipart body part by part (never
// ParseMultipartForm, which would spool it into memory or temp files).
func multipartReader(body io.Reader, boundary string) (*multipart.Reader, error) {
	if boundary == "" {
		return nil, errors.New("multipart body without a boundary parameter")
	}
	return multipart.NewReader(body, boundary), nil
}
