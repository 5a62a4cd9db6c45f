package daemon

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon/auth"
	"sandtop/backend/gen/filesystem/filesystemconnect"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
)

// fuzzDaemon is a daemon with no processes, for feeding its handler.
func fuzzDaemon(f *testing.F) *Daemon {
	d, err := New(Config{RuntimeRoot: filepath.Join(f.TempDir(), "runtime")})
	if err != nil {
		f.Fatal(err)
	}
	return d
}

// postRaw sends body to procedure in the given content type, gzipped or
// not, straight into the handler, and returns the HTTP status.
func postRaw(h http.Handler, procedure, contentType string, gz bool, body []byte) int {
	if gz {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, _ = w.Write(body)
		_ = w.Close()
		body = b.Bytes()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, procedure, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if gz {
		enc := "Content-Encoding"
		if strings.HasPrefix(contentType, "application/connect+") || strings.HasPrefix(contentType, "application/grpc") {
			enc = "Connect-Content-Encoding"
		}
		req.Header.Set(enc, "gzip")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

var contentTypes = []string{"application/proto", "application/json", "application/connect+proto", "application/connect+json", "application/grpc", "application/grpc-web+proto"}

// fuzzFamily feeds one RPC family's procedures with arbitrary bodies: any
// answer but a server error (or a panic) is fine. Procedures that start or
// signal processes, or stream for ever, are left out: their decoding is the
// same code, and their validation has its own tests.
func fuzzFamily(f *testing.F, procedures []string, seeds [][]byte) {
	d := fuzzDaemon(f)
	h := d.Handler()
	for _, s := range seeds {
		for i := range procedures {
			f.Add(uint8(i), uint8(0), false, s)
			f.Add(uint8(i), uint8(1), true, s)
		}
	}
	f.Fuzz(func(t *testing.T, proc, ct uint8, gz bool, body []byte) {
		p := procedures[int(proc)%len(procedures)]
		c := contentTypes[int(ct)%len(contentTypes)]
		if code := postRaw(h, p, c, gz, body); code >= 500 {
			t.Fatalf("%s %s gzip=%v: HTTP %d for %q", p, c, gz, code, body)
		}
	})
}

func FuzzProcessRequests(f *testing.F) {
	fuzzFamily(f, []string{
		processconnect.ProcessListProcedure,
		processconnect.ProcessConnectProcedure,
		processconnect.ProcessSendInputProcedure,
		processconnect.ProcessUpdateProcedure,
		processconnect.ProcessCloseStdinProcedure,
		processconnect.ProcessStreamInputProcedure,
	}, [][]byte{{}, []byte(`{}`), []byte(`{"process":{"pid":7}}`), []byte(`{"process":{"tag":"x"},"input":{"stdin":"aGk="}}`), {0x0a, 0x02, 0x08, 0x07}})
}

func FuzzSupervisorRequests(f *testing.F) {
	fuzzFamily(f, []string{
		sandtopv1connect.SupervisorHelloProcedure,
		sandtopv1connect.SupervisorListGroupsProcedure,
		sandtopv1connect.SupervisorForegroundProcedure,
		sandtopv1connect.SupervisorListTerminalsProcedure,
		sandtopv1connect.SupervisorReadFileProcedure,
		sandtopv1connect.SupervisorListDirProcedure,
		sandtopv1connect.SupervisorExitStatusProcedure,
	}, [][]byte{{}, []byte(`{}`), []byte(`{"path":"../../etc/passwd"}`), []byte(`{"pid":1,"pgid":1}`), {0x0a, 0x03, 0x2e, 0x2e, 0x2f}})
}

// FuzzFilesystemRequests decodes envd's filesystem requests with any body.
// Only the calls that change nothing are fuzzed: random paths must never
// create, move or remove files.
func FuzzFilesystemRequests(f *testing.F) {
	fuzzFamily(f, []string{
		filesystemconnect.FilesystemStatProcedure,
		filesystemconnect.FilesystemGetWatcherEventsProcedure,
		filesystemconnect.FilesystemRemoveWatcherProcedure,
	}, [][]byte{{}, []byte(`{}`), []byte(`{"path":"~/../../etc/passwd"}`), []byte(`{"path":"\u0000"}`), []byte(`{"watcherId":"x"}`), {0x0a, 0x01, 0x2f}})
}

// FuzzHeaders feeds the header parsers: Authorization must either give a
// plain user name or be refused, and the keepalive interval stays positive.
func FuzzHeaders(f *testing.F) {
	for _, s := range []string{"Basic cm9vdDo=", "Basic !!!", "Bearer x", "basic bm9ib2R5Og==", "Basic cm9vdA==", "", "90", "-1", "99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if name, err := auth.ParseBasicUser(s); err == nil && strings.ContainsAny(name, ":/\x00\n") {
			t.Fatalf("auth.ParseBasicUser(%q) = %q", s, name)
		}
		if k := keepaliveInterval(http.Header{keepaliveHeader: {s}}); k <= 0 {
			t.Fatalf("keepalive %q gave %s", s, k)
		}
		if err := checkEnvNames(map[string]string{s: "v"}); err == nil && (s == "" || strings.ContainsAny(s, "=\x00")) {
			t.Fatalf("env name %q accepted", s)
		}
	})
}
