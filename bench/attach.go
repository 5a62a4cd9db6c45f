package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"time"

	"github.com/creack/pty"

	"sandtop/backend/envd"
	"sandtop/backend/seam"
)

// attachFigures: a keystroke's round trip through a terminal session, the
// path an attached operator types on (one input stream to the daemon, the
// PTY's echo back on the output stream), beside a local PTY's echo. The
// client is the one the CLI uses.
func (b *bench) attachFigures(n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := envd.Dial("unix:" + b.sock)
	if err != nil {
		return err
	}
	rt, err := seam.NewRuntime(ctx, c, seam.RuntimeConfig{Cwd: "/", PollInterval: 5 * time.Millisecond})
	if err != nil {
		return err
	}
	t, err := rt.SpawnTerminal(ctx, seam.TerminalSpec{Argv: []string{"cat"}, Cwd: "/", Rows: 24, Cols: 80, Grace: time.Second})
	if err != nil {
		return err
	}
	remote, err := echoTimes(n, t.Output(), func(key []byte) error { return t.Write(ctx, key) })
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	if err := rt.Dispose(ctx); err != nil {
		return fmt.Errorf("dispose: %w", err)
	}
	cmd := exec.Command("cat")
	ptmx, err := pty.Start(cmd)
	if err != nil {
		return err
	}
	local, err := echoTimes(n, ptmx, func(key []byte) error { _, err := ptmx.Write(key); return err })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_ = ptmx.Close()
	if err != nil {
		return fmt.Errorf("local pty: %w", err)
	}
	b.add("a keystroke's echo through a terminal session, p50", us(p50(remote)), us(p50(local))+" (local PTY)", times(p50(remote), p50(local)), "")
	return nil
}

func us(d time.Duration) string { return fmt.Sprintf("%d µs", d.Microseconds()) }

// echoTimes types n keys, one at a time, through write and times each until
// out echoes it. Each key is a letter the previous one was not.
func echoTimes(n int, out io.Reader, write func([]byte) error) ([]time.Duration, error) {
	seen := make(chan []byte, 64)
	go func() {
		defer close(seen)
		for {
			buf := make([]byte, 4096)
			k, err := out.Read(buf)
			if k > 0 {
				seen <- buf[:k]
			}
			if err != nil {
				return
			}
		}
	}()
	ds := make([]time.Duration, 0, n)
	for i := range n {
		key := []byte{byte('a' + i%26)}
		start := time.Now()
		if err := write(key); err != nil {
			return nil, err
		}
		for echoed := false; !echoed; {
			select {
			case b, ok := <-seen:
				if !ok {
					return nil, io.ErrUnexpectedEOF
				}
				echoed = bytes.Contains(b, key)
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("no echo of %q", key)
			}
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds, nil
}
