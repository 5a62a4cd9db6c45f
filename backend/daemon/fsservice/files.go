package fsservice

import (
	"bufio"
	"compress/gzip"
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
			jsonError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed on /files", r.Method))
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
	p, err := resolvePath(r.URL.Query().Get("path"), id.Home)
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
			return fsError(&fs.PathError{Op: "open", Path: p, Err: err}, "download")
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
		jsonError(w, http.StatusBadRequest, fmt.Errorf("unsupported Content-Encoding %q: only gzip", enc))
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
		p, err := resolvePath(query.Get("path"), id.Home)
		if err == nil {
			err = writeFile(id, p, body)
		}
		if err != nil {
			fail(w, connectOr(err, connect.CodeInvalidArgument))
			return
		}
		done = append(done, uploaded{Path: p, Name: filepath.Base(p), Type: "file"})
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
				jsonError(w, http.StatusBadRequest, fmt.Errorf("read multipart body: %w", err))
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
			p, err := resolvePath(target, id.Home)
			if err != nil {
				part.Close()
				jsonError(w, http.StatusBadRequest, err)
				return
			}
			if seen[p] {
				part.Close()
				jsonError(w, http.StatusBadRequest, fmt.Errorf("cannot upload several files to the same path '%s' in one request; the first one was written", p))
				return
			}
			seen[p] = true
			err = writeFile(id, p, part)
			part.Close()
			if err != nil {
				fail(w, err)
				return
			}
			done = append(done, uploaded{Path: p, Name: filepath.Base(p), Type: "file"})
		}
	default:
		jsonError(w, http.StatusBadRequest, fmt.Errorf("unsupported content type %q: want multipart/form-data or application/octet-stream", r.Header.Get("Content-Type")))
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

// writeFile creates or truncates p (making its parent directories) as the
// identity, so both are the user's, then streams src into it.
func writeFile(id Identity, p string, src io.Reader) error {
	var f *os.File
	err := id.do(func() error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fsError(err, "make parent directories of %s", p)
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return errorf(connect.CodeInvalidArgument, "path is a directory: %s", p)
		}
		var err error
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		return fsError(err, "open %s", p)
	})
	if err != nil {
		return err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// io.CopyBuffer with a plain writer: the buffer is ours and fixed.
	_, err = io.CopyBuffer(struct{ io.Writer }{f}, src, *bp)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return fsError(err, "write %s", p)
}

// multipartReader streams the parts of a multipart body part by part (never
// ParseMultipartForm, which would spool it into memory or temp files).
func multipartReader(body io.Reader, boundary string) (*multipart.Reader, error) {
	if boundary == "" {
		return nil, errors.New("multipart body without a boundary parameter")
	}
	return multipart.NewReader(body, boundary), nil
}
