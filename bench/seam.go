package main

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"syscall"
	"time"

	"sandtop/backend/envd"
	"sandtop/backend/seam"
)

// seamFigures: the seam's own spawn (Spawn to a published group) and
// teardown (TeardownGroup of a group that obeys SIGTERM), called in process
// against the same daemon, as a program embedding the seam would. The
// references are a local fork and exec, and a local SIGTERM and wait.
func (b *bench) seamFigures(n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := envd.Dial("unix:" + b.sock)
	if err != nil {
		return err
	}
	rt, err := seam.NewRuntime(ctx, c, seam.RuntimeConfig{Cwd: "/", PollInterval: 5 * time.Millisecond})
	if err != nil {
		return err
	}
	quiet := seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.OutputCollect(1024), Stderr: seam.OutputCollect(1024)}
	var spawns []time.Duration
	for range n {
		start := time.Now()
		h, err := rt.Spawn(ctx, seam.SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: quiet, Grace: time.Second})
		if err != nil {
			return err
		}
		spawns = append(spawns, time.Since(start))
		<-h.Done() // not timed: the program's own run and the handle's end
	}
	sort.Slice(spawns, func(i, j int) bool { return spawns[i] < spawns[j] })
	var tears []time.Duration
	for range n {
		h, err := rt.Spawn(ctx, seam.SpawnSpec{Argv: []string{"/bin/sleep", "1000"}, Cwd: "/", Stdio: quiet, Grace: 10 * time.Second})
		if err != nil {
			return err
		}
		start := time.Now()
		if err := rt.TeardownGroup(ctx, h.Pgid(), 10*time.Second, nil); err != nil {
			return err
		}
		tears = append(tears, time.Since(start))
		<-h.Done()
	}
	sort.Slice(tears, func(i, j int) bool { return tears[i] < tears[j] })
	local, err := timed(n, func() error {
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			return err
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		return nil
	})
	if err != nil {
		return err
	}
	fork, err := timed(n, func() error { return exec.Command("true").Run() })
	if err != nil {
		return err
	}
	b.add("seam Spawn to a published group (in process), p50", ms(p50(spawns)), ms(p50(fork))+" (fork+exec)", times(p50(spawns), p50(fork)), "< 10 ms")
	b.add("seam teardown of a group obeying SIGTERM, p50", ms(p50(tears)), ms(p50(local))+" (start, TERM, wait)", times(p50(tears), p50(local)), "< 50 ms")
	if err := rt.Dispose(ctx); err != nil {
		return fmt.Errorf("dispose: %w", err)
	}
	return nil
}
