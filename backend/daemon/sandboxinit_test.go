package daemon_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	fspb "sandtop/backend/gen/filesystem"
	"sandtop/backend/gen/filesystem/filesystemconnect"
)

// do sends one HTTP request and returns its status and body.
func do(t *testing.T, method, u, token string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Access-Token", token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postInit sends POST /init with body as E2B's control plane does.
func postInit(t *testing.T, addr, token string, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	return do(t, "POST", addr+"/init", token, map[string]string{"Content-Type": "application/json"}, string(b))
}

// sandboxUser is a user other than the daemon's when it runs as root (so the
// default user really switches), else the daemon's own.
func sandboxUser(t *testing.T) string {
	if os.Geteuid() == 0 {
		return "nobody"
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// openDir is a scratch directory every user may enter and write.
func openDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "sandtop-init-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// /init sets the user, working directory and environment of requests that
// name none, and /envs reports the environment.
func TestInitSetsDefaultUserWorkdirAndEnv(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	name, dir := sandboxUser(t), openDir(t)
	sh := startReq("/bin/sh", "-c", `id -un; pwd; echo "$FOO|$LANG"`)
	before := run(t, env.Client, sh)
	if strings.Contains(before.stdout.String(), dir) {
		t.Fatalf("before /init the command already runs in %s: %q", dir, before.stdout.String())
	}
	if code, body := postInit(t, env.Addr, "", map[string]any{
		"defaultUser": name, "defaultWorkdir": dir,
		"envVars":   map[string]string{"FOO": "bar", "LANG": "xx"},
		"timestamp": time.Now().Format(time.RFC3339Nano),
	}); code != http.StatusNoContent {
		t.Fatalf("/init: %d %s", code, body)
	}
	r := run(t, env.Client, sh)
	// Config.Env (LANG=C.UTF-8 in daemontest) wins over /init's variables.
	if want := name + "\n" + dir + "\nbar|C.UTF-8\n"; r.stdout.String() != want {
		t.Errorf("after /init: %q, want %q", r.stdout.String(), want)
	}
	// The request's own cwd and env still win.
	cwd := "/"
	req := startReq("/bin/sh", "-c", `pwd; echo "$FOO"`)
	req.Process.Cwd = &cwd
	req.Process.Envs = map[string]string{"FOO": "mine"}
	if r := run(t, env.Client, req); r.stdout.String() != "/\nmine\n" {
		t.Errorf("request's own cwd and env: %q", r.stdout.String())
	}
	// A file written with no user is the default user's, and an empty path
	// is the default workdir.
	if code, body := postRawAs(t, env.Addr, dir+"/f", ""); code != 200 {
		t.Fatalf("upload: %d %s", code, body)
	}
	if fi, err := os.Stat(dir + "/f"); err != nil || fileOwner(fi) != name {
		t.Errorf("uploaded file owner: %v %v, want %s", fi, err, name)
	}
	fs := filesystemconnect.NewFilesystemClient(http.DefaultClient, env.Addr, connect.WithProtoJSON())
	st, err := fs.Stat(ctxFor(t, 10*time.Second), connect.NewRequest(&fspb.StatRequest{Path: ""}))
	if err != nil || st.Msg.GetEntry().GetPath() != dir {
		t.Errorf("Stat of the empty path: %v %v, want %s", st, err, dir)
	}

	code, body := do(t, "GET", env.Addr+"/envs", "", nil, "")
	var got map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || got["FOO"] != "bar" || got["LANG"] != "C.UTF-8" {
		t.Errorf("/envs: %d %s", code, body)
	}

	// An older /init (a retry or replay) changes nothing; a newer one
	// replaces the variables.
	postInit(t, env.Addr, "", map[string]any{"envVars": map[string]string{"FOO": "old"}, "timestamp": time.Now().Add(-time.Hour).Format(time.RFC3339Nano)})
	if r := run(t, env.Client, startReq("/bin/sh", "-c", `echo "$FOO"`)); r.stdout.String() != "bar\n" {
		t.Errorf("a stale /init changed the env: %q", r.stdout.String())
	}
	postInit(t, env.Addr, "", map[string]any{"envVars": map[string]string{"BAZ": "1"}, "timestamp": time.Now().Add(time.Second).Format(time.RFC3339Nano)})
	if r := run(t, env.Client, startReq("/bin/sh", "-c", `echo "$FOO|$BAZ"`)); r.stdout.String() != "|1\n" {
		t.Errorf("a newer /init's envVars replace the old: %q", r.stdout.String())
	}
}

// What the daemon could not honour is refused whole, naming the field.
func TestInitRefusesWhatItCannotHonour(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	for _, c := range []struct {
		body map[string]any
		msg  string
	}{
		// Root: "invalid username"; otherwise: the daemon cannot act as it.
		{map[string]any{"defaultUser": "no-such-user-here", "envVars": map[string]string{"A": "1"}}, "no-such-user-here"},
		{map[string]any{"envVars": map[string]string{"A=B": "1"}}, "envVars: env name"},
		{map[string]any{"caBundle": "-----BEGIN CERTIFICATE-----"}, "caBundle"},
		{map[string]any{"volumeMounts": []any{map[string]string{"nfsTarget": "x", "path": "/mnt"}}}, "volumeMounts"},
	} {
		if code, body := postInit(t, env.Addr, "", c.body); code != http.StatusBadRequest || !strings.Contains(body, c.msg) || strings.Contains(fmt.Sprint(c.body), "no-such") && !strings.HasPrefix(body, "defaultUser: ") {
			t.Errorf("/init %v: %d %q, want 400 with %q", c.body, code, body, c.msg)
		}
	}
	if code, body := do(t, "POST", env.Addr+"/init", "", nil, "{not json"); code != http.StatusBadRequest {
		t.Errorf("/init with a broken body: %d %s", code, body)
	}
	if r := run(t, env.Client, startReq("/bin/sh", "-c", `echo "$A"`)); r.stdout.String() != "\n" {
		t.Errorf("a refused /init changed the env: %q", r.stdout.String())
	}
}

// envd's token rules: the first /init may set a token; from then on an /init
// must carry that same token in its body, so nobody without it can change
// or clear it, and every other route needs it in X-Access-Token.
func TestInitTokenRules(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	if code, body := do(t, "GET", env.Addr+"/envs", "", nil, ""); code != 200 {
		t.Fatalf("tokenless daemon: /envs %d %s", code, body)
	}
	if code, body := postInit(t, env.Addr, "", map[string]any{"accessToken": "t1"}); code != http.StatusNoContent {
		t.Fatalf("first /init with a token: %d %s", code, body)
	}
	if code, _ := do(t, "GET", env.Addr+"/envs", "", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("after /init set a token, /envs without it: %d, want 401", code)
	}
	if code, _ := do(t, "GET", env.Addr+"/envs", "t1", nil, ""); code != 200 {
		t.Errorf("/envs with the token: %d", code)
	}
	for _, c := range []struct {
		header string
		body   map[string]any
		msg    string
	}{
		{"", map[string]any{}, "access token reset not authorized"},
		{"", map[string]any{"accessToken": "t2"}, "access token validation failed"},
		// The header alone does not do: envd takes the body's token.
		{"t1", map[string]any{"accessToken": "t2"}, "access token validation failed"},
		{"t1", map[string]any{"defaultUser": "root"}, "access token reset not authorized"},
	} {
		if code, body := postInit(t, env.Addr, c.header, c.body); code != http.StatusUnauthorized || !strings.Contains(body, c.msg) {
			t.Errorf("/init %v (header %q): %d %q, want 401 %q", c.body, c.header, code, body, c.msg)
		}
	}
	if code, _ := do(t, "GET", env.Addr+"/envs", "t1", nil, ""); code != 200 {
		t.Errorf("the token changed: /envs with t1: %d", code)
	}
	if code, _ := do(t, "GET", env.Addr+"/envs", "t2", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("/envs with t2: %d, want 401", code)
	}
	if code, body := postInit(t, env.Addr, "", map[string]any{"accessToken": "t1", "envVars": map[string]string{"X": "1"}}); code != http.StatusNoContent {
		t.Errorf("/init with the same token: %d %s", code, body)
	}

	// A daemon started with a token (as it must be beyond loopback) keeps it.
	tok := daemontest.StartTCP(t, daemon.Config{Token: "s3cret"})
	if code, _ := postInit(t, tok.Addr, "", map[string]any{"accessToken": "mine"}); code != http.StatusUnauthorized {
		t.Errorf("/init setting a token on a daemon that has one: %d, want 401", code)
	}
	if code, _ := postInit(t, tok.Addr, "", map[string]any{"defaultUser": "root"}); code != http.StatusUnauthorized {
		t.Errorf("/init without the token: %d, want 401", code)
	}
	if code, _ := postInit(t, tok.Addr, "wrong", map[string]any{"accessToken": "s3cret"}); code != http.StatusUnauthorized {
		t.Errorf("/init with a wrong header: %d, want 401", code)
	}
	if code, body := postInit(t, tok.Addr, "s3cret", map[string]any{"accessToken": "s3cret"}); code != http.StatusNoContent {
		t.Errorf("/init with the token: %d %s", code, body)
	}
}

// signFiles makes envd's signature for a /files operation.
func signFiles(path, op, username, token string, exp *int64) string {
	s := strings.Join([]string{path, op, username, token}, ":")
	if exp != nil {
		s += ":" + strconv.FormatInt(*exp, 10)
	}
	sum := sha256.Sum256([]byte(s))
	return "v1_" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// A daemon with a token serves /files without the header to a request
// signed with the token (envd's signed URLs), and nothing else.
func TestSignedFilesURLs(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{Token: "s3cret"})
	dir := openDir(t)
	p := dir + "/hello.txt"
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	signed := func(path, op, username string, exp *int64, sig string) string {
		q := url.Values{"path": {path}}
		if username != "" {
			q.Set("username", username)
		}
		if exp != nil {
			q.Set("signature_expiration", strconv.FormatInt(*exp, 10))
		}
		if sig == "" {
			sig = signFiles(path, op, username, "s3cret", exp)
		}
		q.Set("signature", sig)
		return env.Addr + "/files?" + q.Encode()
	}
	later, past := time.Now().Add(time.Minute).Unix(), time.Now().Add(-time.Minute).Unix()
	who := sandboxUser(t)
	for _, c := range []struct {
		what, method, u string
		code            int
		msg             string
	}{
		{"read", "GET", signed(p, "read", "", nil, ""), 200, "hello"},
		{"read with a user", "GET", signed(p, "read", who, nil, ""), 200, "hello"},
		{"read before expiry", "GET", signed(p, "read", "", &later, ""), 200, "hello"},
		{"expired", "GET", signed(p, "read", "", &past, ""), 401, `{"code":401,"message":"signature is already expired"}`},
		{"signed for another path", "GET", signed(dir+"/other", "read", "", nil, signFiles(p, "read", "", "s3cret", nil)), 401, "invalid signature"},
		{"another user than signed", "GET", signed(p, "read", who, nil, signFiles(p, "read", "", "s3cret", nil)), 401, "invalid signature"},
		{"signed with another token", "GET", signed(p, "read", "", nil, signFiles(p, "read", "", "guess", nil)), 401, "invalid signature"},
		{"a read signature to write", "POST", signed(p, "read", "", nil, ""), 401, "invalid signature"},
		{"no signature", "GET", filesURL(env.Addr, p, ""), 401, "missing signature query parameter"},
		{"a signature elsewhere", "GET", strings.Replace(signed(p, "read", "", nil, ""), "/files?", "/envs?", 1), 401, "X-Access-Token"},
	} {
		code, body := do(t, c.method, c.u, "", map[string]string{"Content-Type": "application/octet-stream"}, "x")
		if code != c.code || !strings.Contains(body, c.msg) {
			t.Errorf("%s: %d %q, want %d with %q", c.what, code, body, c.code, c.msg)
		}
	}
	code, body := do(t, "POST", signed(p, "write", "", &later, ""), "", map[string]string{"Content-Type": "application/octet-stream"}, "written")
	if b, _ := os.ReadFile(p); code != 200 || string(b) != "written" {
		t.Errorf("signed write: %d %s, file %q", code, body, b)
	}
	// A wrong header is not made good by a signature.
	if code, _ := do(t, "GET", signed(p, "read", "", nil, ""), "wrong", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("signed read with a wrong token header: %d, want 401", code)
	}
}

// xattrs lists a file's user.e2b.* attributes.
func xattrs(t *testing.T, p string) map[string]string {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := unix.Listxattr(p, buf)
	if err != nil {
		t.Fatalf("listxattr %s: %v", p, err)
	}
	out := map[string]string{}
	for _, name := range bytes.Split(buf[:n], []byte{0}) {
		if key, ok := strings.CutPrefix(string(name), "user.e2b."); ok {
			v := make([]byte, 4096)
			m, err := unix.Getxattr(p, string(name), v)
			if err != nil {
				t.Fatal(err)
			}
			out[key] = string(v[:m])
		}
	}
	return out
}

// uploadWithMetadata posts a raw body with X-Metadata-* headers and returns
// the status and the answer's metadata field.
func uploadWithMetadata(t *testing.T, addr, p, body string, md map[string]string) (int, map[string]string, string) {
	t.Helper()
	hdr := map[string]string{"Content-Type": "application/octet-stream"}
	for k, v := range md {
		hdr["X-Metadata-"+k] = v
	}
	code, raw := do(t, "POST", filesURL(addr, p, ""), "", hdr, body)
	var answer []struct {
		Path     string
		Metadata map[string]string
	}
	if code == 200 && (json.Unmarshal([]byte(raw), &answer) != nil || len(answer) != 1) {
		t.Fatalf("upload answer: %s", raw)
	}
	if code != 200 {
		return code, nil, raw
	}
	return code, answer[0].Metadata, raw
}

// Upload metadata: X-Metadata-* become user.e2b.* attributes, returned in the
// answer; an overwrite replaces the whole set; a rename keeps it; bad
// metadata is refused before anything is written.
func TestUploadMetadata(t *testing.T) {
	e := startFS(t)
	// On disk, not in /tmp: tmpfs may lack user attributes.
	dir, err := os.MkdirTemp(".", "meta-")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	p := dir + "/m.txt"
	code, md, raw := uploadWithMetadata(t, e.Addr, p, "one", map[string]string{"Owner": "alice", "purpose": "test run"})
	want := map[string]string{"owner": "alice", "purpose": "test run"}
	if code != 200 || fmt.Sprint(md) != fmt.Sprint(want) || fmt.Sprint(xattrs(t, p)) != fmt.Sprint(want) {
		t.Fatalf("first upload: %d %s; answer %v, attributes %v; want %v", code, raw, md, xattrs(t, p), want)
	}
	// An overwrite replaces the set: purpose goes.
	code, md, _ = uploadWithMetadata(t, e.Addr, p, "two", map[string]string{"Owner": "bob"})
	if want := map[string]string{"owner": "bob"}; code != 200 || fmt.Sprint(md) != fmt.Sprint(want) || fmt.Sprint(xattrs(t, p)) != fmt.Sprint(want) {
		t.Errorf("overwrite: %d, answer %v, attributes %v; want %v", code, md, xattrs(t, p), want)
	}
	// A rename keeps it.
	if _, err := e.fs.Move(ctxFor(t, 10*time.Second), as("", &fspb.MoveRequest{Source: p, Destination: dir + "/moved.txt"})); err != nil {
		t.Fatal(err)
	}
	if got := xattrs(t, dir+"/moved.txt"); got["owner"] != "bob" {
		t.Errorf("after a rename: %v", got)
	}
	st, err := e.fs.Stat(ctxFor(t, 10*time.Second), as("", &fspb.StatRequest{Path: dir + "/moved.txt"}))
	if err != nil || st.Msg.GetEntry().GetMetadata()["owner"] != "bob" {
		t.Errorf("Stat's metadata after a rename: %v %v", st, err)
	}
	// An overwrite with none clears them, and the answer has no metadata.
	code, md, raw = uploadWithMetadata(t, e.Addr, dir+"/moved.txt", "three", nil)
	if code != 200 || md != nil || strings.Contains(raw, "metadata") || len(xattrs(t, dir+"/moved.txt")) != 0 {
		t.Errorf("overwrite without metadata: %d %s, attributes %v", code, raw, xattrs(t, dir+"/moved.txt"))
	}
	// Refused: a value that is not printable ASCII, a key too long, a set
	// over 4 KiB. The file is not touched.
	for _, bad := range []map[string]string{
		{"k": "caf\u00e9"},
		{strings.Repeat("k", 250): "v"},
		{"a": strings.Repeat("v", 2100), "b": strings.Repeat("v", 2100)},
	} {
		code, _, raw := uploadWithMetadata(t, e.Addr, dir+"/moved.txt", "bad", bad)
		if code != http.StatusBadRequest || !strings.Contains(raw, "invalid metadata") {
			t.Errorf("metadata %.40v: %d %s, want 400 invalid metadata", bad, code, raw)
		}
	}
	if b, _ := os.ReadFile(dir + "/moved.txt"); string(b) != "three" {
		t.Errorf("a refused upload wrote the file: %q", b)
	}
}

// An upload that replaces a file is a write of that file to a watcher, as
// envd's in-place write is (E2B's SDK tests wait for it).
func TestUploadOverwriteIsAWriteToWatchers(t *testing.T) {
	e := startFS(t)
	p := e.dir + "/w.txt"
	if code, body := postRawAs(t, e.Addr, p, ""); code != 200 {
		t.Fatalf("upload: %d %s", code, body)
	}
	ctx := ctxFor(t, 20*time.Second)
	s, err := e.fs.WatchDir(ctx, as("", &fspb.WatchDirRequest{Path: e.dir}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Receive() || s.Msg().GetStart() == nil {
		t.Fatalf("no start event: %v", s.Err())
	}
	if code, body := postRawAs(t, e.Addr, p, ""); code != 200 {
		t.Fatalf("overwrite: %d %s", code, body)
	}
	for s.Receive() {
		ev := s.Msg().GetFilesystem()
		if ev != nil && ev.GetName() == "w.txt" && ev.GetType() == fspb.EventType_EVENT_TYPE_WRITE {
			return
		}
	}
	t.Fatalf("no write event for w.txt: %v", s.Err())
}

// postRawAs uploads "data" to p as user (the default when "").
func postRawAs(t *testing.T, addr, p, user string) (int, string) {
	t.Helper()
	return do(t, "POST", filesURL(addr, p, user), "", map[string]string{"Content-Type": "application/octet-stream"}, "data")
}

func fileOwner(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	u, err := user.LookupId(strconv.Itoa(int(st.Uid)))
	if err != nil {
		return strconv.Itoa(int(st.Uid))
	}
	return u.Username
}

// A root daemon makes the parents an upload needs where the user could not,
// and hands them to the user, as envd does; the file is the user's.
func TestUploadMakesParentsTheUserCouldNot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: needs root: a root daemon makes parents the user could not")
	}
	e := startFS(t)
	// e.dir is root's, 0755: nobody cannot make anything in it.
	p := e.dir + "/top/a/b/file.txt"
	if code, body := postRawAs(t, e.Addr, p, "nobody"); code != 200 {
		t.Fatalf("upload as nobody: %d %s", code, body)
	}
	for _, d := range []string{e.dir + "/top", e.dir + "/top/a", e.dir + "/top/a/b", p} {
		fi, err := os.Lstat(d)
		if err != nil || fileOwner(fi) != "nobody" {
			t.Errorf("%s: %v %v, want it nobody's", d, fi, err)
		}
	}
	if fi, _ := os.Stat(e.dir); fileOwner(fi) != "root" {
		t.Errorf("the existing parent changed hands: %s", fileOwner(fi))
	}
	// A file where a parent should be is still an error.
	os.WriteFile(e.dir+"/plain", nil, 0o644)
	if code, body := postRawAs(t, e.Addr, e.dir+"/plain/x/f", "nobody"); code == 200 {
		t.Errorf("upload under a file: %d %s", code, body)
	}
	// What the user could not read stays out of reach: the file itself is
	// written with the user's rights.
	os.MkdirAll(e.dir+"/private", 0o700)
	if code, _ := postRawAs(t, e.Addr, e.dir+"/private/f", "nobody"); code != http.StatusForbidden {
		t.Errorf("upload into a directory nobody may not write: %d, want 403", code)
	}
}

// /metrics answers envd's fields.
func TestMetrics(t *testing.T) {
	env := daemontest.StartTCP(t, daemon.Config{})
	code, body := do(t, "GET", env.Addr+"/metrics", "", nil, "")
	var m struct {
		Ts        int64   `json:"ts"`
		CPUCount  int     `json:"cpu_count"`
		CPUPct    float64 `json:"cpu_used_pct"`
		MemTotal  uint64  `json:"mem_total"`
		MemUsed   uint64  `json:"mem_used"`
		MemTotMiB uint64  `json:"mem_total_mib"`
		DiskTotal uint64  `json:"disk_total"`
		DiskUsed  uint64  `json:"disk_used"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &m) != nil {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	if m.CPUCount < 1 || m.MemTotal == 0 || m.MemUsed == 0 || m.MemUsed > m.MemTotal || m.MemTotMiB != m.MemTotal>>20 ||
		m.DiskTotal == 0 || m.DiskUsed > m.DiskTotal || m.CPUPct < 0 || m.CPUPct > 100 || time.Since(time.Unix(m.Ts, 0)) > time.Minute {
		t.Errorf("/metrics: implausible %s", body)
	}
}

// serve's base environment is its own user's: another user's process gets
// its own HOME, USER and LOGNAME, and none of the daemon user's XDG
// directories, while the rest of the base reaches it.
func TestAnotherUsersProcessGetsItsOwnHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: needs root to run a process as another user")
	}
	env := daemontest.StartTCP(t, daemon.Config{Env: []string{
		"PATH=/usr/bin:/bin", "HOME=/root", "USER=root", "XDG_RUNTIME_DIR=/run/user/0", "XDG_CONFIG_HOME=/root/.config", "FOO=1",
	}})
	dir := openDir(t)
	if code, body := postInit(t, env.Addr, "", map[string]any{"defaultUser": "nobody", "defaultWorkdir": dir}); code != http.StatusNoContent {
		t.Fatalf("/init: %d %s", code, body)
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	sh := startReq("/bin/sh", "-c", `echo "$HOME|$USER|$LOGNAME|$XDG_RUNTIME_DIR|$XDG_CONFIG_HOME|$FOO"`)
	if r, want := run(t, env.Client, sh), nobody.HomeDir+"|nobody|nobody|||1\n"; r.stdout.String() != want {
		t.Errorf("as nobody: %q, want %q", r.stdout.String(), want)
	}
	// The daemon's own user keeps the base as it is.
	req := startReq("/bin/sh", "-c", `echo "$HOME|$XDG_RUNTIME_DIR"`)
	cr := connect.NewRequest(req)
	cr.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("root:")))
	s, err := env.Client.Process.Start(ctxFor(t, 30*time.Second), cr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := drainStart(s)
	if err != nil || r.stdout.String() != "/root|/run/user/0\n" {
		t.Errorf("as root: %q %v", r.stdout.String(), err)
	}
}

// Where the user may write the file but not its directory, an upload
// rewrites the file in place, which keeps its attributes: the upload's set
// must still replace the old one.
func TestUploadInPlaceReplacesStaleMetadata(t *testing.T) {
	e := startFS(t)
	dir, err := os.MkdirTemp(".", "meta-inplace-")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.Abs(dir)
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	p := dir + "/f.txt"
	if err := os.WriteFile(p, []byte("old"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o666)
	for k, v := range map[string]string{"user.e2b.stale": "1", "user.e2b.kept": "old"} {
		if err := unix.Setxattr(p, k, []byte(v), 0); err != nil {
			t.Fatal(err)
		}
	}
	userName := "" // the daemon's own user, kept out of the directory by its mode
	if os.Geteuid() == 0 {
		userName = "nobody" // root writes any directory; nobody may not write this one
		os.Chmod(dir, 0o755)
	} else {
		os.Chmod(dir, 0o555)
	}
	hdr := map[string]string{"Content-Type": "application/octet-stream", "X-Metadata-Kept": "new"}
	code, body := do(t, "POST", filesURL(e.Addr, p, userName), "", hdr, "new")
	if code != 200 {
		t.Fatalf("upload: %d %s", code, body)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	if got := xattrs(t, p); fmt.Sprint(got) != fmt.Sprint(map[string]string{"kept": "new"}) {
		t.Errorf("attributes after an in-place upload: %v, want only kept=new", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the upload was not in place: %v", entries)
	}
}
