package daemon_test

import (
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// A program can replace its spill file with a FIFO. ReadFile used to wait
// for a writer for ever, one pinned OS thread per call; now it refuses at
// once, and many such calls leave the thread count alone.
func TestReadFileRefusesAFIFOAtOnce(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	fifo := filepath.Join(env.RuntimeRoot, "spill")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := env.Client.Supervisor.ReadFile(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.ReadFileRequest{Path: fifo}))
	wantCode(t, err, connect.CodeFailedPrecondition, "is not a regular file")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusal took %s", took)
	}

	before := threads(t)
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := env.Client.Supervisor.ReadFile(ctxFor(t, 20*time.Second), connect.NewRequest(&sandtopv1.ReadFileRequest{Path: fifo}))
			if connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("ReadFile on a FIFO: %v", err)
			}
		}()
	}
	wg.Wait()
	if after := threads(t); after > before+16 {
		t.Errorf("threads went from %d to %d after 200 FIFO reads", before, after)
	}
	// Listing a directory that holds one still works, and never opens it.
	res, err := env.Client.Supervisor.ListDir(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.ListDirRequest{Path: env.RuntimeRoot}))
	if err != nil || len(res.Msg.GetEntries()) == 0 {
		t.Errorf("ListDir: %v", err)
	}
	// ListDir on the FIFO itself is refused as not a directory, at once.
	_, err = env.Client.Supervisor.ListDir(ctxFor(t, 5*time.Second), connect.NewRequest(&sandtopv1.ListDirRequest{Path: fifo}))
	wantCode(t, err, connect.CodeInvalidArgument, "is not a directory")
}
