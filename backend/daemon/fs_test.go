package daemon_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	fspb "sandtop/backend/gen/filesystem"
	"sandtop/backend/gen/filesystem/filesystemconnect"
	"sandtop/testwait"
)

// fsEnv is a daemon on loopback TCP with a filesystem client (JSON, as E2B's
// JS SDK speaks it) and a scratch directory.
type fsEnv struct {
	*daemontest.Env
	fs  filesystemconnect.FilesystemClient
	dir string
}

func startFS(t *testing.T) *fsEnv {
	t.Helper()
	env := daemontest.StartTCP(t, daemon.Config{})
	// Not t.TempDir(): its parent is private, and other users must be able
	// to enter this directory.
	dir, err := os.MkdirTemp("", "sandtop-fs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &fsEnv{Env: env, fs: filesystemconnect.NewFilesystemClient(http.DefaultClient, env.Addr, connect.WithProtoJSON()), dir: dir}
}

// as makes a request act as user name (envd's Basic "name:" header).
func as[T any](name string, msg *T) *connect.Request[T] {
	req := connect.NewRequest(msg)
	if name != "" {
		req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(name+":")))
	}
	return req
}

func paths(entries []*fspb.EntryInfo) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.GetPath())
	}
	return out
}

func TestFilesystemRPCs(t *testing.T) {
	e := startFS(t)
	ctx := ctxFor(t, 30*time.Second)
	d := e.dir

	mk, err := e.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: d + "/a/b"}))
	if err != nil {
		t.Fatalf("MakeDir: %v", err)
	}
	if got := mk.Msg.GetEntry(); got.GetType() != fspb.FileType_FILE_TYPE_DIRECTORY || got.GetPath() != d+"/a/b" || got.GetName() != "b" {
		t.Errorf("MakeDir entry: %v", got)
	}
	_, err = e.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: d + "/a/b"}))
	wantCode(t, err, connect.CodeAlreadyExists, "already exists")
	if err := os.WriteFile(d+"/a/f.txt", []byte("12345"), 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = e.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: d + "/a/f.txt"}))
	wantCode(t, err, connect.CodeInvalidArgument, "not a directory")

	st, err := e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: d + "/a/f.txt"}))
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	en := st.Msg.GetEntry()
	if en.GetType() != fspb.FileType_FILE_TYPE_FILE || en.GetSize() != 5 || en.GetMode() != 0o640 ||
		en.GetPermissions() != "-rw-r-----" || en.GetName() != "f.txt" || en.GetOwner() == "" || en.GetGroup() == "" ||
		en.SymlinkTarget != nil || time.Since(en.GetModifiedTime().AsTime()) > time.Minute {
		t.Errorf("Stat entry: %v", en)
	}
	_, err = e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: d + "/missing"}))
	wantCode(t, err, connect.CodeNotFound, "missing")
	_, err = e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "~other/x"}))
	wantCode(t, err, connect.CodeInvalidArgument, "~user")

	one, err := e.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: d}))
	if err != nil {
		t.Fatalf("ListDir: %v", err)
	}
	if got := strings.Join(paths(one.Msg.GetEntries()), " "); got != d+"/a" {
		t.Errorf("ListDir depth 1: %s", got)
	}
	three, err := e.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: d, Depth: 3}))
	if err != nil {
		t.Fatalf("ListDir: %v", err)
	}
	if got, want := strings.Join(paths(three.Msg.GetEntries()), " "), d+"/a "+d+"/a/b "+d+"/a/f.txt"; got != want {
		t.Errorf("ListDir depth 3:\n got %s\nwant %s", got, want)
	}
	_, err = e.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: d + "/a/f.txt"}))
	wantCode(t, err, connect.CodeInvalidArgument, "not a directory")
	_, err = e.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: d + "/missing"}))
	wantCode(t, err, connect.CodeNotFound, "missing")

	mv, err := e.fs.Move(ctx, as("", &fspb.MoveRequest{Source: d + "/a/f.txt", Destination: d + "/new/dir/g.txt"}))
	if err != nil {
		t.Fatalf("Move: %v", err)
	}
	if mv.Msg.GetEntry().GetPath() != d+"/new/dir/g.txt" || mv.Msg.GetEntry().GetSize() != 5 {
		t.Errorf("Move entry: %v", mv.Msg.GetEntry())
	}
	_, err = e.fs.Move(ctx, as("", &fspb.MoveRequest{Source: d + "/a/f.txt", Destination: d + "/x"}))
	wantCode(t, err, connect.CodeNotFound, "f.txt")

	if _, err := e.fs.Remove(ctx, as("", &fspb.RemoveRequest{Path: d + "/new"})); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(d + "/new"); !os.IsNotExist(err) {
		t.Errorf("Remove left %s: %v", d+"/new", err)
	}
	if _, err := e.fs.Remove(ctx, as("", &fspb.RemoveRequest{Path: d + "/new"})); err != nil {
		t.Errorf("Remove of a missing path: want success as envd, got %v", err)
	}
}

// Relative paths and ~ resolve against the user's home, as in envd.
func TestFilesystemPathsUnderHome(t *testing.T) {
	e := startFS(t)
	ctx := ctxFor(t, 30*time.Second)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	name := "sandtop-fstest-" + filepath.Base(e.dir)
	t.Cleanup(func() { os.RemoveAll(filepath.Join(home, name)) })
	if _, err := e.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: name + "/rel"})); err != nil {
		t.Fatalf("MakeDir relative: %v", err)
	}
	st, err := e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "~/" + name + "/rel"}))
	if err != nil {
		t.Fatalf("Stat ~/: %v", err)
	}
	if got, want := st.Msg.GetEntry().GetPath(), filepath.Join(home, name, "rel"); got != want {
		t.Errorf("path %q, want %q", got, want)
	}
}

func TestFilesystemSymlinks(t *testing.T) {
	e := startFS(t)
	ctx := ctxFor(t, 30*time.Second)
	d := e.dir
	os.MkdirAll(d+"/real/sub", 0o755)
	os.WriteFile(d+"/real/file", []byte("x"), 0o600)
	os.Symlink("real/file", d+"/lfile")
	os.Symlink("real", d+"/ldir")
	os.Symlink("nowhere", d+"/dangling")

	st, err := e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: d + "/lfile"}))
	if err != nil {
		t.Fatal(err)
	}
	if en := st.Msg.GetEntry(); en.GetType() != fspb.FileType_FILE_TYPE_FILE || en.GetSymlinkTarget() != d+"/real/file" ||
		en.GetMode() != 0o600 || !strings.HasPrefix(en.GetPermissions(), "L") || en.GetName() != "lfile" {
		t.Errorf("symlink to file: %v", en)
	}
	st, err = e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: d + "/dangling"}))
	if err != nil {
		t.Fatal(err)
	}
	if en := st.Msg.GetEntry(); en.GetType() != fspb.FileType_FILE_TYPE_UNSPECIFIED || en.GetSymlinkTarget() != d+"/dangling" {
		t.Errorf("dangling symlink: %v", en)
	}
	ls, err := e.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: d + "/ldir"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(paths(ls.Msg.GetEntries()), " "), d+"/ldir/file "+d+"/ldir/sub"; got != want {
		t.Errorf("ListDir through a symlink: %s, want %s", got, want)
	}
}

func TestFilesystemWatchDir(t *testing.T) {
	e := startFS(t)
	ctx := ctxFor(t, 30*time.Second)
	d := e.dir
	s, err := e.fs.WatchDir(ctx, as("", &fspb.WatchDirRequest{Path: d, Recursive: true, IncludeEntry: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Receive() || s.Msg().GetStart() == nil {
		t.Fatalf("first message is not start: %v %v", s.Msg(), s.Err())
	}
	os.Mkdir(d+"/sub", 0o755)
	seen := map[string]bool{}
	want := func(key string) {
		t.Helper()
		for !seen[key] {
			if !s.Receive() {
				t.Fatalf("stream ended before %s: %v (seen %v)", key, s.Err(), seen)
			}
			ev := s.Msg().GetFilesystem()
			if ev == nil {
				continue
			}
			seen[ev.GetName()+" "+ev.GetType().String()] = true
			if ev.GetType() == fspb.EventType_EVENT_TYPE_CREATE && ev.GetEntry() == nil && ev.GetName() == "sub" {
				t.Errorf("create event without the entry asked for: %v", ev)
			}
		}
	}
	want("sub EVENT_TYPE_CREATE")
	// The new subdirectory is watched too (the watch is recursive).
	var err2 error
	testwait.For(t, 10*time.Second, "a file in the new subdirectory to be reported", func() bool {
		err2 = os.WriteFile(d+"/sub/f", []byte("x"), 0o644)
		for i := 0; i < 4 && s.Receive(); i++ {
			if ev := s.Msg().GetFilesystem(); ev != nil {
				seen[ev.GetName()+" "+ev.GetType().String()] = true
			}
			if seen["sub/f EVENT_TYPE_WRITE"] {
				return true
			}
		}
		return false
	})
	if err2 != nil {
		t.Fatal(err2)
	}
	os.Rename(d+"/sub/f", d+"/g")
	want("sub/f EVENT_TYPE_RENAME")
	want("g EVENT_TYPE_CREATE")
	os.Remove(d + "/g")
	want("g EVENT_TYPE_REMOVE")

	_, err = e.fs.WatchDir(ctx, as("", &fspb.WatchDirRequest{Path: d + "/missing"}))
	if err == nil {
		s2, _ := e.fs.WatchDir(ctx, as("", &fspb.WatchDirRequest{Path: d + "/missing"}))
		s2.Receive()
		err = s2.Err()
	}
	wantCode(t, err, connect.CodeNotFound, "missing")
}

func TestFilesystemPollingWatcher(t *testing.T) {
	e := startFS(t)
	ctx := ctxFor(t, 30*time.Second)
	cw, err := e.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: e.dir}))
	if err != nil {
		t.Fatal(err)
	}
	wid := cw.Msg.GetWatcherId()
	os.WriteFile(e.dir+"/x", []byte("1"), 0o644)
	var got []string
	testwait.For(t, 10*time.Second, "the watcher's create event", func() bool {
		ev, err := e.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: wid}))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev.Msg.GetEvents() {
			got = append(got, e.GetName()+" "+e.GetType().String())
		}
		return strings.Contains(strings.Join(got, ","), "x EVENT_TYPE_CREATE")
	})
	if _, err := e.fs.RemoveWatcher(ctx, as("", &fspb.RemoveWatcherRequest{WatcherId: wid})); err != nil {
		t.Fatal(err)
	}
	_, err = e.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: wid}))
	wantCode(t, err, connect.CodeNotFound, wid)
	_, err = e.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: e.dir + "/x"}))
	wantCode(t, err, connect.CodeInvalidArgument, "not a directory")
}

// filesURL is the /files address for a path (and user, if not empty).
func filesURL(addr, path, user string) string {
	q := url.Values{"path": {path}}
	if user != "" {
		q.Set("username", user)
	}
	return addr + "/files?" + q.Encode()
}

// uploadMultipart posts files (path → content) in one multipart body, each
// part naming its own path.
func uploadMultipart(t *testing.T, addr, user string, files [][2]string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f[0])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	mw.Close()
	u := addr + "/files"
	if user != "" {
		u += "?username=" + url.QueryEscape(user)
	}
	resp, err := http.Post(u, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestFilesUploadDownload(t *testing.T) {
	e := startFS(t)
	d := e.dir
	code, body := uploadMultipart(t, e.Addr, "", [][2]string{{d + "/p/q/one.txt", "first"}, {d + "/two.txt", "second"}})
	if code != http.StatusOK {
		t.Fatalf("upload: %d %s", code, body)
	}
	var answer []struct{ Path, Name, Type string }
	if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer) != 2 || answer[0].Path != d+"/p/q/one.txt" || answer[0].Name != "one.txt" || answer[0].Type != "file" {
		t.Fatalf("upload answer %s: %v", body, err)
	}
	if code, got := get(t, filesURL(e.Addr, d+"/p/q/one.txt", "")); code != 200 || got != "first" {
		t.Errorf("download: %d %q", code, got)
	}
	// A raw body with path in the query, overwriting.
	resp, err := http.Post(filesURL(e.Addr, d+"/two.txt", ""), "application/octet-stream", strings.NewReader("replaced"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, got := get(t, filesURL(e.Addr, d+"/two.txt", "")); resp.StatusCode != 200 || got != "replaced" {
		t.Errorf("raw upload: %d, then %d %q", resp.StatusCode, code, got)
	}
	if code, _ := uploadMultipart(t, e.Addr, "", [][2]string{{d + "/same", "a"}, {d + "/same", "b"}}); code != http.StatusBadRequest {
		t.Errorf("two files to one path: %d, want 400", code)
	}
	for _, c := range []struct {
		path string
		code int
		msg  string
	}{
		{d + "/missing", 404, "does not exist"},
		{d + "/p", 400, "is a directory"},
	} {
		code, body := get(t, filesURL(e.Addr, c.path, ""))
		if code != c.code || !strings.Contains(body, c.msg) || !strings.Contains(body, `"code":`) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, code, body, c.code, c.msg)
		}
	}
	if code, body := get(t, filesURL(e.Addr, d+"/two.txt", "no-such-user-here")); code != http.StatusUnauthorized {
		t.Errorf("unknown user: %d %s, want 401", code, body)
	}
}

func TestFilesNeedTheToken(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Token: "s3cret"})
	if code, _ := get(t, filesURL(env.Addr, "/etc/hostname", "")); code != http.StatusUnauthorized {
		t.Errorf("GET /files without the token: %d, want 401", code)
	}
	req, _ := http.NewRequest("GET", filesURL(env.Addr, "/etc/hostname", ""), nil)
	req.Header.Set("X-Access-Token", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /files with the token: %d", resp.StatusCode)
	}
	fs := filesystemconnect.NewFilesystemClient(http.DefaultClient, env.Addr)
	_, err = fs.Stat(ctxFor(t, 10*time.Second), connect.NewRequest(&fspb.StatRequest{Path: "/"}))
	wantCode(t, err, connect.CodeUnauthenticated, "X-Access-Token")
}

// A root daemon does file operations with the requesting user's rights: what
// "nobody" cannot reach stays out of reach, through symlinks too, and what
// it creates is its own.
func TestFilesystemActsAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	e := startFS(t)
	ctx := ctxFor(t, 30*time.Second)
	d := e.dir
	const nobody = 65534
	os.MkdirAll(d+"/private", 0o700)
	os.WriteFile(d+"/private/secret", []byte("s"), 0o600)
	os.WriteFile(d+"/rootonly", []byte("r"), 0o600)
	os.MkdirAll(d+"/open", 0o777)
	os.Chmod(d+"/open", 0o777)
	os.Symlink(d+"/rootonly", d+"/open/link")

	_, err := e.fs.Stat(ctx, as("nobody", &fspb.StatRequest{Path: d + "/private/secret"}))
	wantCode(t, err, connect.CodePermissionDenied, "permission denied")
	_, err = e.fs.ListDir(ctx, as("nobody", &fspb.ListDirRequest{Path: d + "/private"}))
	wantCode(t, err, connect.CodePermissionDenied, "permission denied")
	_, err = e.fs.Remove(ctx, as("nobody", &fspb.RemoveRequest{Path: d + "/rootonly"}))
	wantCode(t, err, connect.CodePermissionDenied, "permission denied")
	_, err = e.fs.MakeDir(ctx, as("nobody", &fspb.MakeDirRequest{Path: d + "/private/x"}))
	wantCode(t, err, connect.CodePermissionDenied, "permission denied")
	if _, err := e.fs.Stat(ctx, as("root", &fspb.StatRequest{Path: d + "/private/secret"})); err != nil {
		t.Errorf("root may stat it: %v", err)
	}
	for _, p := range []string{d + "/private/secret", d + "/rootonly", d + "/open/link"} {
		if code, body := get(t, filesURL(e.Addr, p, "nobody")); code != http.StatusForbidden {
			t.Errorf("nobody GET %s: %d %s, want 403", p, code, body)
		}
	}
	if code, body := uploadMultipart(t, e.Addr, "nobody", [][2]string{{d + "/open/link", "overwrite"}}); code != http.StatusForbidden {
		t.Errorf("nobody writing through a symlink to root's file: %d %s, want 403", code, body)
	}
	if b, _ := os.ReadFile(d + "/rootonly"); string(b) != "r" {
		t.Errorf("root's file changed to %q", b)
	}
	code, body := uploadMultipart(t, e.Addr, "nobody", [][2]string{{d + "/open/new/dir/mine", "ok"}})
	if code != http.StatusOK {
		t.Fatalf("nobody upload: %d %s", code, body)
	}
	for _, p := range []string{d + "/open/new", d + "/open/new/dir", d + "/open/new/dir/mine"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody {
			t.Errorf("%s is owned by uid %d, want %d", p, st.Uid, nobody)
		}
	}
	mk, err := e.fs.MakeDir(ctx, as("nobody", &fspb.MakeDirRequest{Path: d + "/open/made"}))
	if err != nil {
		t.Fatal(err)
	}
	if mk.Msg.GetEntry().GetOwner() != "nobody" {
		t.Errorf("MakeDir as nobody: owner %q", mk.Msg.GetEntry().GetOwner())
	}
	_, err = e.fs.Stat(ctx, as("no-such-user-here", &fspb.StatRequest{Path: d}))
	wantCode(t, err, connect.CodeUnauthenticated, "no-such-user-here")
	// The daemon's own threads keep root's rights afterwards.
	if _, err := e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: d + "/private/secret"})); err != nil {
		t.Errorf("daemon user after nobody's requests: %v", err)
	}
}

// envd has the filesystem half, so the envd-only mode serves it too.
func TestFilesystemInCompatMode(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Compat: true})
	fs := filesystemconnect.NewFilesystemClient(http.DefaultClient, env.Addr)
	st, err := fs.Stat(ctxFor(t, 10*time.Second), connect.NewRequest(&fspb.StatRequest{Path: "/"}))
	if err != nil || st.Msg.GetEntry().GetType() != fspb.FileType_FILE_TYPE_DIRECTORY {
		t.Fatalf("Stat / in compat mode: %v %v", st, err)
	}
	if code, _ := get(t, filesURL(env.Addr, "/", "")); code != http.StatusBadRequest {
		t.Errorf("GET /files of a directory in compat mode: %d, want 400", code)
	}
}
