package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	fspb "sandtop/backend/gen/filesystem"
)

// A filesystem error quotes the path once, clipped: a 1 MB path used to come
// back whole, twice (the message, then the system's own error), a 2 MB
// answer.
func TestFilesystemErrorsQuoteAClippedPath(t *testing.T) {
	e := startFS(t)
	huge := e.dir + "/" + strings.Repeat("d/", 512<<10) // 1 MiB
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const bound = 1 << 10
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s of a 1 MiB path succeeded", what)
			return
		}
		if n := len(err.Error()); n > bound {
			t.Errorf("%s: a %d-byte error for a 1 MiB path: %.300s…", what, n, err.Error())
		}
	}
	// Beyond the system's limit, and within it (a name too long for the
	// kernel: its own error used to repeat the path).
	long := e.dir + "/" + strings.Repeat("n", 3000)
	for _, p := range []string{huge, long} {
		_, err := e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: p}))
		check("Stat", err)
		_, err = e.fs.ListDir(ctx, as("", &fspb.ListDirRequest{Path: p}))
		check("ListDir", err)
		_, err = e.fs.MakeDir(ctx, as("", &fspb.MakeDirRequest{Path: p}))
		check("MakeDir", err)
		_, err = e.fs.Move(ctx, as("", &fspb.MoveRequest{Source: p, Destination: p + "x"}))
		check("Move", err)
		_, err = e.fs.CreateWatcher(ctx, as("", &fspb.CreateWatcherRequest{Path: p}))
		check("CreateWatcher", err)
		_, err = e.fs.GetWatcherEvents(ctx, as("", &fspb.GetWatcherEventsRequest{WatcherId: p}))
		check("GetWatcherEvents", err)
		code, body, err := postRaw(e.Addr, p[:min(len(p), 200<<10)], []byte("x"))
		if err != nil || code < 400 || len(body) > bound {
			t.Errorf("POST /files to a %d-byte path: %d, %d-byte answer %.300s, %v", len(p), code, len(body), body, err)
		}
	}
	_, err := e.fs.Stat(ctx, as("", &fspb.StatRequest{Path: "~" + huge}))
	check("Stat ~user", err)
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("Stat of ~user: %v", err)
	}

	if code, body := get(t, filesURL(e.Addr, long, "")); code < 400 || len(body) > bound {
		t.Errorf("GET /files of a %d-byte path: %d, %d-byte answer", len(long), code, len(body))
	}
}
